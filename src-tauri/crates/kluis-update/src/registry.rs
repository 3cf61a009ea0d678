//! Windows registry values Kluis reads (IT's machine policy, what its installers recorded),
//! under `HKEY_LOCAL_MACHINE` (only an administrator writes there) or `HKEY_CURRENT_USER`.
//! Elsewhere there is no registry: every value is absent.

/// Which hive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hive {
    Machine,
    User,
}

/// The DWORD `value` under `key`, if there is one.
#[cfg(windows)]
pub(crate) fn dword(hive: Hive, key: &str, value: &str) -> Option<u32> {
    use windows_sys::Win32::System::Registry::RRF_RT_REG_DWORD;
    let mut data: u32 = 0;
    let mut size = std::mem::size_of::<u32>() as u32;
    // SAFETY: `data` holds a DWORD and `size` says so.
    let status = unsafe {
        get(
            hive,
            key,
            value,
            RRF_RT_REG_DWORD,
            (&mut data as *mut u32).cast(),
            &mut size,
        )
    };
    (status == 0).then_some(data)
}

/// The string `value` under `key` (trimmed; none when empty), if there is one.
#[cfg(windows)]
pub(crate) fn string(hive: Hive, key: &str, value: &str) -> Option<String> {
    use windows_sys::Win32::System::Registry::RRF_RT_REG_SZ;
    let mut size: u32 = 0;
    // SAFETY: no buffer: the call only says the size in bytes.
    let status = unsafe {
        get(
            hive,
            key,
            value,
            RRF_RT_REG_SZ,
            std::ptr::null_mut(),
            &mut size,
        )
    };
    if status != 0 || size == 0 || size > 64 * 1024 {
        return None;
    }
    let mut data = vec![0u16; (size as usize).div_ceil(2)];
    // SAFETY: `data` holds `size` bytes, and `size` says so.
    let status = unsafe {
        get(
            hive,
            key,
            value,
            RRF_RT_REG_SZ,
            data.as_mut_ptr().cast(),
            &mut size,
        )
    };
    if status != 0 {
        return None;
    }
    let text = String::from_utf16_lossy(&data);
    let text = text.trim_end_matches('\0').trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// `RegGetValueW` of `value` under `key` in `hive`, of the types `flags` allow, into `data`
/// (`size` bytes; null: only the size is said).
///
/// # Safety
/// `data` is null or points to `*size` writable bytes.
#[cfg(windows)]
unsafe fn get(
    hive: Hive,
    key: &str,
    value: &str,
    flags: u32,
    data: *mut std::ffi::c_void,
    size: &mut u32,
) -> u32 {
    use windows_sys::Win32::System::Registry::{
        RegGetValueW, HKEY_CURRENT_USER, HKEY_LOCAL_MACHINE,
    };
    let wide = |s: &str| s.encode_utf16().chain(Some(0)).collect::<Vec<u16>>();
    let (key, value) = (wide(key), wide(value));
    let root = match hive {
        Hive::Machine => HKEY_LOCAL_MACHINE,
        Hive::User => HKEY_CURRENT_USER,
    };
    // SAFETY: the names are NUL-terminated UTF-16 that outlive the call; `data` and `size` as
    // the caller promises.
    unsafe {
        RegGetValueW(
            root,
            key.as_ptr(),
            value.as_ptr(),
            flags,
            std::ptr::null_mut(),
            data,
            size,
        )
    }
}

#[cfg(not(windows))]
pub(crate) fn dword(_: Hive, _: &str, _: &str) -> Option<u32> {
    None
}

#[cfg(not(windows))]
pub(crate) fn string(_: Hive, _: &str, _: &str) -> Option<String> {
    None
}
