//! Children inherited across an upgrade. A window the old `kluis-tray` started is, once an
//! upgrade ran the new program in its place (`main.rs`: the same process), a child of the new
//! one, which did not start it and would never wait for it: closed, it would stay a zombie
//! until log-out. At its start — when none of this process's children can be its own — the
//! program waits for each on a thread of its own, as `keeper::start_window` does for the
//! windows it starts.

/// Waits, each on a thread, for every child this process has now; answers how many. Reads
/// Linux's `/proc/self/task/*/children`; a kernel without those files leaves them as before.
pub fn wait_for_children_at_start() -> usize {
    let children = children_listed(std::path::Path::new("/proc/self/task"));
    for &pid in &children {
        std::thread::spawn(move || loop {
            // SAFETY: waitpid only writes the status it is given (none here).
            let waited = unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
            let interrupted =
                std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted;
            if waited != -1 || !interrupted {
                break;
            }
        });
    }
    children.len()
}

/// The child pids the `children` file of each task under `tasks` lists.
fn children_listed(tasks: &std::path::Path) -> Vec<libc::pid_t> {
    let Ok(tasks) = std::fs::read_dir(tasks) else {
        return Vec::new();
    };
    (tasks.flatten())
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|listed| {
            (listed.split_whitespace())
                .filter_map(|pid| pid.parse().ok())
                .collect::<Vec<_>>()
        })
        .filter(|&pid| pid > 0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every task's list is read, junk in it skipped, and no list at all is none.
    #[test]
    fn reads_the_children_of_every_task() {
        let tasks = tempfile::tempdir().unwrap();
        for (task, listed) in [("10", "11 12 "), ("13", "x -1 0 14\n"), ("15", "")] {
            std::fs::create_dir(tasks.path().join(task)).unwrap();
            std::fs::write(tasks.path().join(task).join("children"), listed).unwrap();
        }
        std::fs::create_dir(tasks.path().join("16")).unwrap();
        let mut listed = children_listed(tasks.path());
        listed.sort();
        assert_eq!(listed, [11, 12, 14]);
        assert!(children_listed(&tasks.path().join("none")).is_empty());
    }
}
