//! Recovery's objects on an SFTP server, under the target's folder.

use kluis_core::Result;
use russh_sftp::protocol::{OpenFlags, StatusCode};

use crate::sftp;

pub(super) async fn sftp_put(
    server: &sftp::Server,
    relative: &str,
    bytes: &[u8],
    replace: bool,
) -> Result<()> {
    use tokio::io::AsyncWriteExt;
    let sftp_client = &server.connected.sftp;
    let root = server.root.trim_end_matches('/');
    let path = format!("{root}/{relative}");
    // Its folders, one by one (SFTP makes one level at a time).
    let mut folder = root.to_string();
    for part in relative
        .split('/')
        .collect::<Vec<_>>()
        .split_last()
        .map_or(&[][..], |(_, f)| f)
    {
        folder = format!("{folder}/{part}");
        if !matches!(sftp_client.metadata(folder.as_str()).await, Ok(m) if m.is_dir()) {
            if let Err(e) = sftp_client.create_dir(folder.as_str()).await {
                return Err(server.said(&e, &format!("create the folder {folder}")));
            }
        }
    }
    // Replacing: written beside under a name of its own, then renamed over the old one (SFTP's
    // plain rename never replaces: the old one is removed just before).
    let written = match replace {
        true => format!("{path}.{}.part", uuid::Uuid::new_v4().simple()),
        false => path.clone(),
    };
    let flags = OpenFlags::CREATE | OpenFlags::EXCLUDE | OpenFlags::WRITE;
    let mut file = (sftp_client.open_with_flags(written.as_str(), flags).await)
        .map_err(|e| server.said(&e, &format!("write {written}")))?;
    let sent = async {
        file.write_all(bytes).await?;
        file.shutdown().await
    }
    .await;
    if let Err(e) = sent {
        let _ = sftp_client.remove_file(written.as_str()).await;
        return Err(server.lost(&e));
    }
    if replace {
        let _ = sftp_client.remove_file(path.as_str()).await;
        if let Err(e) = sftp_client.rename(written.as_str(), path.as_str()).await {
            let _ = sftp_client.remove_file(written.as_str()).await;
            return Err(server.said(&e, &format!("write {path}")));
        }
    }
    Ok(())
}

pub(super) async fn sftp_get(
    server: &sftp::Server,
    relative: &str,
    most: u64,
) -> Result<Option<Vec<u8>>> {
    use tokio::io::AsyncReadExt;
    let path = format!("{}/{relative}", server.root.trim_end_matches('/'));
    let mut file = match server.connected.sftp.open(path.as_str()).await {
        Ok(file) => file,
        Err(e) if sftp::is_status(&e, StatusCode::NoSuchFile) => return Ok(None),
        Err(e) => return Err(server.said(&e, &format!("read {path}"))),
    };
    let mut bytes = Vec::new();
    (&mut file)
        .take(most + 1)
        .read_to_end(&mut bytes)
        .await
        .map_err(|e| server.lost(&e))?;
    Ok(Some(bytes))
}

pub(super) async fn sftp_list(server: &sftp::Server, relative: &str) -> Result<Vec<(String, u64)>> {
    let root = server.root.trim_end_matches('/');
    let mut found = Vec::new();
    let mut folders = vec![relative.to_string()];
    while let Some(name) = folders.pop() {
        let folder = match name.is_empty() {
            true => root.to_string(),
            false => format!("{root}/{name}"),
        };
        let entries = match server.connected.sftp.read_dir(folder.as_str()).await {
            Ok(entries) => entries,
            Err(e) if sftp::is_status(&e, StatusCode::NoSuchFile) => continue,
            Err(e) => return Err(server.said(&e, &format!("list {folder}"))),
        };
        for entry in entries {
            let file_name = entry.file_name();
            if file_name == "." || file_name == ".." {
                continue;
            }
            let child = match name.is_empty() {
                true => file_name,
                false => format!("{name}/{file_name}"),
            };
            let meta = entry.metadata();
            if meta.is_dir() {
                folders.push(child);
            } else if meta.is_regular() {
                found.push((child, meta.size.unwrap_or(0)));
            }
        }
    }
    found.sort();
    Ok(found)
}
