//! kluis-restore's tests on crafted archives: `archive::` what is listed, `hostile::` what a
//! hostile or damaged archive gets (zip-slip in each form, a link, a bomb, a password, an
//! archive cut short), `restore::` restoring and restore tests, `zip64::` an archive over
//! 4 GiB (sparse on disk).

mod archive;
mod crafted;
mod encrypted;
mod hostile;
mod restore;
mod zip64;
