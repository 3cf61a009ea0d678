//! kluis-restore's tests on crafted archives: `archive::` what is listed, `hostile::` what a
//! hostile or damaged archive gets (zip-slip in each form, a link, a bomb, a password, an
//! archive cut short), `restore::` restoring and restore tests, `zip64::` an archive over
//! 4 GiB (sparse on disk), `bounds::` names as the file system compares them, the disk's
//! room, how much a restore makes, and the folder made.

mod archive;
mod bounds;
mod crafted;
mod encrypted;
mod hostile;
mod restore;
mod zip64;
