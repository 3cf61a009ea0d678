//! kluis-recovery: the day the computer is gone — stolen, burnt, encrypted by ransomware —
//! every klant's backups found on the copies off it and restored, with nothing but the
//! office's recovery kit and the copy targets' own secrets.
//!
//! Parts and data flow:
//! - [`key`]: the office's recovery key. [`RecoveryKey`], the private half, lives only in the
//!   kit (age's text, or 24 words to type); [`OfficeKey`], the public half, is all a computer
//!   keeps, and writes to each target.
//! - [`catalog`]: what a target holds as a computer knows it — its [`Catalog`] of klanten and
//!   copies, and each copy's own [`CopyRecord`] beside it (a klant's name, address and
//!   username, each copy's place, length, SHA-256, date, encryption — with the passphrase that
//!   opens it —, lock and last restore test; never a password, api key or token).
//! - [`sealed`]: each document as JSON tagged with the kit's [`VouchKey`] (kept by each
//!   computer that writes catalogs in its keyring) and sealed to the office key with age, and
//!   opened within bounds (another key's, a changed byte, one nobody of the office vouched
//!   for, a newer format: each said).
//! - [`layout`]: where those objects are on a target, beside the klanten's folders of copies.
//! - [`found`]: every backup on a target as recovery lists it — from each computer's newest
//!   catalog that opens, checked against the copies' own records; from the records alone where
//!   no catalog names a copy; by name and size alone, as unverified, where neither does.
//!
//! A computer writes (office key → catalog and records, sealed → the target); a new computer
//! reads (the target's objects → [`found::gather`] with the kit's key → a listing, then a copy
//! fetched, its SHA-256 checked, decrypted with the sealed passphrase, restored).

pub mod catalog;
pub mod found;
pub mod key;
pub mod layout;
pub mod sealed;

pub use catalog::{Adoption, Catalog, CopyNote, CopyRecord, Encrypted, Klant, KlantNote, Pc};
pub use found::{gather, Backup, KlantOf, Listing, Proof};
pub use key::{OfficeKey, RecoveryKey, VouchKey};
