//! Owner-only on Windows: a protected DACL with one entry — full control for the user running
//! Kluis — so nothing is inherited from the folder above (not its Users, not Everyone).
//! Folders pass the entry on to what is created in them; a file gets it right after it is
//! created, while it is still empty. Kernel objects (kluis-tray's named pipe) are made with
//! [`OwnerOnlySecurity`] (that DACL, the user as owner, a medium integrity label), and one
//! made by someone else is known by what [`ObjectSecurity`] reads.

use std::io;
use std::os::windows::ffi::OsStrExt;
use std::path::Path;
use std::ptr::{null, null_mut};

use windows_sys::Win32::Foundation::{
    CloseHandle, LocalFree, ERROR_SUCCESS, HANDLE, INVALID_HANDLE_VALUE,
};
use windows_sys::Win32::Security::Authorization::{
    GetSecurityInfo, SetNamedSecurityInfoW, SetSecurityInfo, SE_FILE_OBJECT, SE_KERNEL_OBJECT,
};
use windows_sys::Win32::Security::{
    AddAccessAllowedAceEx, AddMandatoryAce, CreateWellKnownSid, EqualSid, GetAce, GetLengthSid,
    GetSidSubAuthority, GetSidSubAuthorityCount, GetTokenInformation, InitializeAcl,
    InitializeSecurityDescriptor, SetSecurityDescriptorControl, SetSecurityDescriptorDacl,
    SetSecurityDescriptorOwner, SetSecurityDescriptorSacl, TokenUser, WinMediumLabelSid,
    ACCESS_ALLOWED_ACE, ACL, ACL_REVISION, CONTAINER_INHERIT_ACE, DACL_SECURITY_INFORMATION,
    LABEL_SECURITY_INFORMATION, OBJECT_INHERIT_ACE, OWNER_SECURITY_INFORMATION,
    PROTECTED_DACL_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, PSID, SECURITY_ATTRIBUTES,
    SECURITY_DESCRIPTOR, SE_DACL_PROTECTED, SYSTEM_MANDATORY_LABEL_ACE, TOKEN_QUERY, TOKEN_USER,
    WELL_KNOWN_SID_TYPE,
};
use windows_sys::Win32::Storage::FileSystem::{
    ReOpenFile, FILE_ALL_ACCESS, FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE,
    READ_CONTROL, WRITE_DAC,
};
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

/// The running user's SID, in the TOKEN_USER buffer it came in (u64s: aligned for it).
pub(crate) struct CurrentUser {
    buffer: Vec<u64>,
}

impl CurrentUser {
    pub(crate) fn get() -> io::Result<Self> {
        // SAFETY: the token handle is ours and closed below; the buffer is sized as asked
        // and 8-aligned, which TOKEN_USER needs.
        unsafe {
            let mut token: HANDLE = null_mut();
            if OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) == 0 {
                return Err(io::Error::last_os_error());
            }
            let mut len = 0u32;
            GetTokenInformation(token, TokenUser, null_mut(), 0, &mut len);
            let mut buffer = vec![0u64; (len as usize).div_ceil(8).max(1)];
            let ok =
                GetTokenInformation(token, TokenUser, buffer.as_mut_ptr().cast(), len, &mut len);
            let error = io::Error::last_os_error();
            CloseHandle(token);
            if ok == 0 {
                return Err(error);
            }
            Ok(Self { buffer })
        }
    }

    pub(crate) fn sid(&self) -> PSID {
        // SAFETY: the buffer holds the TOKEN_USER that GetTokenInformation wrote.
        unsafe { (*(self.buffer.as_ptr() as *const TOKEN_USER)).User.Sid }
    }
}

/// An ACL of one entry: full control for `user`, passed on to what a folder holds.
fn owner_only(user: &CurrentUser, folder: bool) -> io::Result<Vec<u64>> {
    // SAFETY: the ACL buffer is as large as InitializeAcl is told, 8-aligned; the SID is valid.
    unsafe {
        let size =
            size_of::<ACL>() + size_of::<ACCESS_ALLOWED_ACE>() + GetLengthSid(user.sid()) as usize;
        let mut acl = vec![0u64; size.div_ceil(8)];
        let size = (acl.len() * 8) as u32;
        if InitializeAcl(acl.as_mut_ptr().cast(), size, ACL_REVISION) == 0 {
            return Err(io::Error::last_os_error());
        }
        let inherit = if folder {
            OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE
        } else {
            0
        };
        if AddAccessAllowedAceEx(
            acl.as_mut_ptr().cast(),
            ACL_REVISION,
            inherit,
            FILE_ALL_ACCESS,
            user.sid(),
        ) == 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok(acl)
    }
}

/// (windows-sys keeps it in a module of its own, `Win32_System_SystemServices`, not needed else.)
const SECURITY_DESCRIPTOR_REVISION: u32 = 1;

const PROTECTED_DACL: u32 = DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION;

/// Makes the open file `handle` owner-only. A handle opened to read or write may not change
/// the ACL (that is WRITE_DAC); the file's owner may, through a second handle to the same file.
pub(crate) fn restrict_handle(handle: HANDLE) -> io::Result<()> {
    let acl = owner_only(&CurrentUser::get()?, false)?;
    let share = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
    // SAFETY: `handle` is an open file's; the second handle is closed before returning.
    let status = unsafe {
        let dac = ReOpenFile(handle, WRITE_DAC | READ_CONTROL, share, 0);
        if dac == INVALID_HANDLE_VALUE {
            return Err(io::Error::last_os_error());
        }
        let status = SetSecurityInfo(
            dac,
            SE_FILE_OBJECT,
            PROTECTED_DACL,
            null_mut(),
            null_mut(),
            acl.as_ptr().cast(),
            null(),
        );
        CloseHandle(dac);
        status
    };
    win32(status)
}

/// A Win32 error code as a result.
fn win32(status: u32) -> io::Result<()> {
    match status {
        ERROR_SUCCESS => Ok(()),
        code => Err(io::Error::from_raw_os_error(code as i32)),
    }
}

/// Makes the file or folder at `path` owner-only (a folder's entry is inherited by what it holds).
pub(crate) fn restrict_path(path: &Path, folder: bool) -> io::Result<()> {
    let acl = owner_only(&CurrentUser::get()?, folder)?;
    let wide: Vec<u16> = path.as_os_str().encode_wide().chain([0]).collect();
    // SAFETY: a NUL-terminated path and a valid ACL; no owner, group or SACL is changed.
    let status = unsafe {
        SetNamedSecurityInfoW(
            wide.as_ptr(),
            SE_FILE_OBJECT,
            PROTECTED_DACL,
            null_mut(),
            null_mut(),
            acl.as_ptr().cast(),
            null(),
        )
    };
    win32(status)
}

/// An owner-only security descriptor for a new kernel object (kluis-tray's named pipe): the
/// running user as its owner, a protected DACL of the user's full control alone — the default
/// DACL of a pipe lets every local account read it — and a medium integrity label that no
/// process of a lower one (a sandboxed browser's, of the same user) may read or write through.
pub struct OwnerOnlySecurity {
    // The descriptor points into these buffers (an absolute descriptor holds pointers): kept,
    // unmoved on the heap, for as long as it is.
    _user: CurrentUser,
    _acl: Vec<u64>,
    _label: Vec<u64>,
    _descriptor: Box<SECURITY_DESCRIPTOR>,
    attributes: SECURITY_ATTRIBUTES,
}

/// A mandatory label's policy: no write, no read up from a lower integrity level (windows-sys
/// keeps these in `Win32_System_SystemServices`).
const NO_WRITE_UP: u32 = 0x1;
const NO_READ_UP: u32 = 0x2;

/// A SACL of one entry: the medium integrity label, no write or read up.
fn medium_label() -> io::Result<Vec<u64>> {
    integrity_label(WinMediumLabelSid)
}

/// A SACL of one entry: the integrity label `level` (a well-known label SID), no write or read
/// up.
fn integrity_label(level: WELL_KNOWN_SID_TYPE) -> io::Result<Vec<u64>> {
    let mut label = vec![0u64; 8];
    let mut len = (label.len() * 8) as u32;
    // SAFETY: buffers as large as the calls are told, 8-aligned.
    unsafe {
        let sid: PSID = label.as_mut_ptr().cast();
        if CreateWellKnownSid(level, null_mut(), sid, &mut len) == 0 {
            return Err(io::Error::last_os_error());
        }
        let size = size_of::<ACL>() + size_of::<SYSTEM_MANDATORY_LABEL_ACE>() + len as usize;
        let mut acl = vec![0u64; size.div_ceil(8)];
        let size = (acl.len() * 8) as u32;
        if InitializeAcl(acl.as_mut_ptr().cast(), size, ACL_REVISION) == 0
            || AddMandatoryAce(
                acl.as_mut_ptr().cast(),
                ACL_REVISION,
                0,
                NO_WRITE_UP | NO_READ_UP,
                sid,
            ) == 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok(acl)
    }
}

// SAFETY: the raw pointers point into the heap buffers it owns, which nothing else touches.
unsafe impl Send for OwnerOnlySecurity {}
unsafe impl Sync for OwnerOnlySecurity {}

impl OwnerOnlySecurity {
    pub fn new() -> io::Result<Self> {
        let user = CurrentUser::get()?;
        let acl = owner_only(&user, false)?;
        let label = medium_label()?;
        // SAFETY: all zeroes is a valid (empty) SECURITY_DESCRIPTOR, initialised below.
        let mut descriptor: Box<SECURITY_DESCRIPTOR> = Box::new(unsafe { std::mem::zeroed() });
        let sd: PSECURITY_DESCRIPTOR = (&mut *descriptor as *mut SECURITY_DESCRIPTOR).cast();
        // SAFETY: `sd` is a SECURITY_DESCRIPTOR-sized buffer; the SID and ACL it is given live
        // as long as it (see the fields).
        unsafe {
            if InitializeSecurityDescriptor(sd, SECURITY_DESCRIPTOR_REVISION) == 0
                || SetSecurityDescriptorOwner(sd, user.sid(), 0) == 0
                || SetSecurityDescriptorDacl(sd, 1, acl.as_ptr().cast(), 0) == 0
                || SetSecurityDescriptorControl(sd, SE_DACL_PROTECTED, SE_DACL_PROTECTED) == 0
                || SetSecurityDescriptorSacl(sd, 1, label.as_ptr().cast(), 0) == 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        let attributes = SECURITY_ATTRIBUTES {
            nLength: size_of::<SECURITY_ATTRIBUTES>() as u32,
            lpSecurityDescriptor: sd.cast(),
            bInheritHandle: 0,
        };
        Ok(Self {
            _user: user,
            _acl: acl,
            _label: label,
            _descriptor: descriptor,
            attributes,
        })
    }

    /// The SECURITY_ATTRIBUTES to create an object with, valid while `self` is.
    pub fn attributes(&self) -> *mut core::ffi::c_void {
        (&self.attributes as *const SECURITY_ATTRIBUTES)
            .cast_mut()
            .cast()
    }
}

/// A kernel object's owner, DACL and integrity label, read in one call ([`ObjectSecurity::of`];
/// the object opened with READ_CONTROL, as a pipe opened to read or write is): whether it is
/// the running user's and not a sandboxed program's — a named pipe made by one of the user's
/// own processes with [`OwnerOnlySecurity`], not another account's or a sandboxed program's
/// squatting its name. The descriptor read is freed when this is dropped.
pub struct ObjectSecurity {
    descriptor: PSECURITY_DESCRIPTOR,
    owner: PSID,
    dacl: *mut ACL,
    sacl: *mut ACL,
}

impl ObjectSecurity {
    /// Reads `object`'s owner, DACL and label (the DACL for the tests' checks).
    pub fn of(object: &impl std::os::windows::io::AsRawHandle) -> io::Result<ObjectSecurity> {
        let mut read = ObjectSecurity {
            descriptor: null_mut(),
            owner: null_mut(),
            dacl: null_mut(),
            sacl: null_mut(),
        };
        // SAFETY: the out-pointers are filled by GetSecurityInfo; the owner, DACL and SACL
        // point into the descriptor, which lives (and is freed) with `read`.
        let status = unsafe {
            GetSecurityInfo(
                object.as_raw_handle(),
                SE_KERNEL_OBJECT,
                OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION | LABEL_SECURITY_INFORMATION,
                &mut read.owner,
                null_mut(),
                &mut read.dacl,
                &mut read.sacl,
                &mut read.descriptor,
            )
        };
        win32(status)?;
        Ok(read)
    }

    /// Whether the object is owned by the running user.
    pub fn owned_by_running_user(&self) -> io::Result<bool> {
        let user = CurrentUser::get()?;
        // SAFETY: both SIDs are valid: the owner's in the descriptor held, the user's in its
        // buffer.
        Ok(!self.owner.is_null() && unsafe { EqualSid(self.owner, user.sid()) } != 0)
    }

    /// Whether the object is labelled below medium integrity: made by one of the user's
    /// sandboxed processes (a low-integrity one's objects are labelled low), not by Kluis. No
    /// label at all is medium.
    pub fn below_medium_integrity(&self) -> bool {
        /// SECURITY_MANDATORY_MEDIUM_RID: the last part of the medium label's SID.
        const MEDIUM: u32 = 0x2000;
        /// SYSTEM_MANDATORY_LABEL_ACE_TYPE.
        const LABEL_ACE: u8 = 0x11;
        let sacl = self.sacl;
        if sacl.is_null() {
            return false;
        }
        let mut below = false;
        // SAFETY: the SACL and the SIDs read point into the descriptor held.
        unsafe {
            for i in 0..(*sacl).AceCount as u32 {
                let mut ace: *mut core::ffi::c_void = null_mut();
                if GetAce(sacl, i, &mut ace) == 0 {
                    continue;
                }
                let ace = ace as *const SYSTEM_MANDATORY_LABEL_ACE;
                if (*ace).Header.AceType != LABEL_ACE {
                    continue;
                }
                let sid = std::ptr::addr_of!((*ace).SidStart) as PSID;
                let parts = *GetSidSubAuthorityCount(sid);
                if parts > 0 && *GetSidSubAuthority(sid, parts as u32 - 1) < MEDIUM {
                    below = true;
                }
            }
        }
        below
    }
}

impl Drop for ObjectSecurity {
    fn drop(&mut self) {
        // SAFETY: the descriptor GetSecurityInfo allocated, freed once.
        unsafe { LocalFree(self.descriptor) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::{create_dir_all, options, prepare_file, restrict, write_atomic};
    use windows_sys::Win32::Foundation::LocalFree;
    use windows_sys::Win32::Security::Authorization::GetNamedSecurityInfoW;
    use windows_sys::Win32::Security::{
        EqualSid, GetAce, GetSecurityDescriptorControl, PSECURITY_DESCRIPTOR, SE_DACL_PROTECTED,
    };

    /// One entry of a DACL: its type (0: allow), flags (3: passed on to files and folders),
    /// access mask, and whether it is the running user's.
    type Entry = (u8, u8, u32, bool);

    /// Whether `path`'s DACL is protected (nothing inherited), and its entries.
    fn dacl(path: &Path) -> (bool, Vec<Entry>) {
        let wide: Vec<u16> = path.as_os_str().encode_wide().chain([0]).collect();
        // SAFETY: the out-pointers are filled by GetNamedSecurityInfoW; the descriptor they
        // point into is freed once read.
        unsafe {
            let mut acl: *mut ACL = null_mut();
            let mut descriptor: PSECURITY_DESCRIPTOR = null_mut();
            let status = GetNamedSecurityInfoW(
                wide.as_ptr(),
                SE_FILE_OBJECT,
                DACL_SECURITY_INFORMATION,
                null_mut(),
                null_mut(),
                &mut acl,
                null_mut(),
                &mut descriptor,
            );
            assert_eq!(status, ERROR_SUCCESS, "the ACL of {}", path.display());
            let found = (protected(descriptor), entries(acl));
            LocalFree(descriptor);
            found
        }
    }

    /// A kernel object's DACL (whether protected, its entries) and its SACL's entries.
    fn object_acls(
        object: &impl std::os::windows::io::AsRawHandle,
    ) -> (bool, Vec<Entry>, Vec<Entry>) {
        let read = ObjectSecurity::of(object).expect("the object's ACLs");
        // SAFETY: the DACL and SACL point into the descriptor `read` holds.
        unsafe {
            (
                protected(read.descriptor),
                entries(read.dacl),
                entries(read.sacl),
            )
        }
    }

    /// Whether `descriptor`'s DACL is protected (nothing inherited).
    unsafe fn protected(descriptor: PSECURITY_DESCRIPTOR) -> bool {
        let (mut control, mut revision) = (0u16, 0u32);
        assert_ne!(
            GetSecurityDescriptorControl(descriptor, &mut control, &mut revision),
            0
        );
        control & SE_DACL_PROTECTED != 0
    }

    /// The entries of `acl` (none when there is none). Every ACE type read here (allowed,
    /// mandatory label) has the same layout: header, mask, SID.
    unsafe fn entries(acl: *const ACL) -> Vec<Entry> {
        let user = CurrentUser::get().unwrap();
        let mut entries = Vec::new();
        if acl.is_null() {
            return entries;
        }
        for i in 0..(*acl).AceCount as u32 {
            let mut ace: *mut core::ffi::c_void = null_mut();
            assert_ne!(GetAce(acl, i, &mut ace), 0);
            let ace = ace as *const ACCESS_ALLOWED_ACE;
            let sid = std::ptr::addr_of!((*ace).SidStart) as PSID;
            let header = (*ace).Header;
            entries.push((
                header.AceType,
                header.AceFlags,
                (*ace).Mask,
                EqualSid(sid, user.sid()) != 0,
            ));
        }
        entries
    }

    /// Whether this runs under Wine, which accepts a file's new DACL but does not keep it
    /// (Wine 8 reports the inherited default after SetSecurityInfo succeeded).
    fn under_wine() -> bool {
        use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleA, GetProcAddress};
        // SAFETY: NUL-terminated names; ntdll is loaded in every process.
        unsafe {
            GetProcAddress(
                GetModuleHandleA(c"ntdll.dll".as_ptr().cast()),
                c"wine_get_version".as_ptr().cast(),
            )
            .is_some()
        }
    }

    /// What Kluis creates is owner-only on Windows — folders with their missing parents, a
    /// file written whole, a database prepared, a part file made and restricted: a protected
    /// DACL of one entry, the running user's full control (a folder's passed on). Run as a
    /// Windows binary under Wine by tests/windows/run.sh, where every call must succeed but
    /// the DACL read back is Wine's default (see `under_wine`): the entries are checked on
    /// Windows only.
    #[test]
    fn creates_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let folder: (bool, Vec<Entry>) = (true, vec![(0, 3, FILE_ALL_ACCESS, true)]);
        let file: (bool, Vec<Entry>) = (true, vec![(0, 0, FILE_ALL_ACCESS, true)]);
        let wine = under_wine();
        let assert_acl = |path: &Path, expected: &(bool, Vec<Entry>), what: &str| {
            let found = dacl(path);
            if !wine {
                assert_eq!(&found, expected, "{what}: {}", path.display());
            }
        };
        let nested = dir.path().join("a").join("b");
        create_dir_all(&nested).unwrap();
        assert_acl(&dir.path().join("a"), &folder, "a parent it made");
        assert_acl(&nested, &folder, "the folder asked for");

        let written = dir.path().join("settings.json");
        write_atomic(&written, b"{}").unwrap();
        assert_acl(&written, &file, "written whole");
        let db = dir.path().join("history.sqlite3");
        prepare_file(&db).unwrap();
        assert_acl(&db, &file, "a database before SQLite opens it");
        let part = dir.path().join(".kluis-x.part");
        let opened = options().write(true).create_new(true).open(&part).unwrap();
        restrict(&opened).unwrap();
        assert_acl(&part, &file, "a part file in a folder of the user's");
        drop(opened);
        let renamed = dir.path().join("backup.zip");
        std::fs::rename(&part, &renamed).unwrap();
        assert_acl(&renamed, &file, "the backup keeps it");
    }

    /// How a window knows kluis-tray's pipe is its user's: an object made with
    /// [`OwnerOnlySecurity`] is owned by the running user; one another account owns (here the
    /// Administrators group, which Wine's user may name as owner) is not. (Events, not pipes:
    /// the same security calls on a kernel object.)
    #[test]
    fn an_object_made_owner_only_is_the_running_users() {
        use windows_sys::Win32::Security::{CreateWellKnownSid, WinBuiltinAdministratorsSid};
        use windows_sys::Win32::System::Threading::CreateEventW;
        let ours = OwnerOnlySecurity::new().unwrap();
        use std::os::windows::io::{FromRawHandle, OwnedHandle};
        // SAFETY: valid attributes for the calls; each handle made is owned (closed) at once.
        unsafe {
            let event = CreateEventW(ours.attributes().cast(), 1, 0, null());
            assert!(!event.is_null(), "{}", io::Error::last_os_error());
            let event = OwnedHandle::from_raw_handle(event);
            assert!(
                ObjectSecurity::of(&event)
                    .unwrap()
                    .owned_by_running_user()
                    .unwrap(),
                "an object made owner-only is the running user's"
            );
            // Its DACL: protected, the user's full control alone; its label: medium (type
            // 0x11), no write or read up.
            assert_eq!(
                object_acls(&event),
                (
                    true,
                    vec![(0, 0, FILE_ALL_ACCESS, true)],
                    vec![(0x11, 0, NO_WRITE_UP | NO_READ_UP, false)]
                ),
                "owner-only, labelled medium"
            );

            let mut admins = vec![0u64; 16];
            let mut len = (admins.len() * 8) as u32;
            let made = CreateWellKnownSid(
                WinBuiltinAdministratorsSid,
                null_mut(),
                admins.as_mut_ptr().cast(),
                &mut len,
            );
            assert_ne!(made, 0, "{}", io::Error::last_os_error());
            let mut descriptor: SECURITY_DESCRIPTOR = std::mem::zeroed();
            let sd: PSECURITY_DESCRIPTOR = (&mut descriptor as *mut SECURITY_DESCRIPTOR).cast();
            assert_ne!(
                InitializeSecurityDescriptor(sd, SECURITY_DESCRIPTOR_REVISION),
                0
            );
            assert_ne!(
                SetSecurityDescriptorOwner(sd, admins.as_mut_ptr().cast(), 0),
                0
            );
            let attributes = SECURITY_ATTRIBUTES {
                nLength: size_of::<SECURITY_ATTRIBUTES>() as u32,
                lpSecurityDescriptor: sd.cast(),
                bInheritHandle: 0,
            };
            let theirs = CreateEventW(&attributes, 1, 0, null());
            assert!(!theirs.is_null(), "{}", io::Error::last_os_error());
            let theirs = OwnedHandle::from_raw_handle(theirs);
            assert!(
                !ObjectSecurity::of(&theirs)
                    .unwrap()
                    .owned_by_running_user()
                    .unwrap(),
                "an object another owns is not the running user's"
            );
        }
    }

    /// A window does not take a pipe of a sandboxed process (labelled low) for Kluis's: an
    /// object labelled low is below medium; one made owner-only (medium) or with no label (as
    /// medium) is not.
    #[test]
    fn an_object_labelled_low_is_below_medium() {
        use std::os::windows::io::{FromRawHandle, OwnedHandle};
        use windows_sys::Win32::Security::WinLowLabelSid;
        use windows_sys::Win32::System::Threading::CreateEventW;
        let low = integrity_label(WinLowLabelSid).unwrap();
        let ours = OwnerOnlySecurity::new().unwrap();
        // SAFETY: valid attributes for the calls; each handle made is owned (closed) at once.
        unsafe {
            let mut descriptor: SECURITY_DESCRIPTOR = std::mem::zeroed();
            let sd: PSECURITY_DESCRIPTOR = (&mut descriptor as *mut SECURITY_DESCRIPTOR).cast();
            assert_ne!(
                InitializeSecurityDescriptor(sd, SECURITY_DESCRIPTOR_REVISION),
                0
            );
            assert_ne!(SetSecurityDescriptorSacl(sd, 1, low.as_ptr().cast(), 0), 0);
            let attributes = SECURITY_ATTRIBUTES {
                nLength: size_of::<SECURITY_ATTRIBUTES>() as u32,
                lpSecurityDescriptor: sd.cast(),
                bInheritHandle: 0,
            };
            let made = |attributes: *const SECURITY_ATTRIBUTES| {
                let event = CreateEventW(attributes, 1, 0, null());
                assert!(!event.is_null(), "{}", io::Error::last_os_error());
                OwnedHandle::from_raw_handle(event)
            };
            let below = |object: OwnedHandle| {
                ObjectSecurity::of(&object)
                    .unwrap()
                    .below_medium_integrity()
            };
            assert!(below(made(&attributes)), "labelled low");
            assert!(!below(made(ours.attributes().cast())), "labelled medium");
            assert!(!below(made(null())), "no label: medium");
        }
    }
}
