//! Recovery's objects in an S3 bucket, under the target's prefix, locked briefly where the
//! bucket has Object Lock (see the parent's text).

use aws_sdk_s3::primitives::ByteStream;
use kluis_core::{Error, Result};

use super::DOCUMENT_LOCK_DAYS;
use crate::s3;

pub(super) fn bucket_key(bucket: &s3::Bucket, relative: &str) -> String {
    match bucket.place.prefix.trim_matches('/') {
        "" => relative.to_string(),
        prefix => format!("{prefix}/{relative}"),
    }
}

pub(super) async fn bucket_put(
    bucket: &s3::Bucket,
    relative: &str,
    bytes: &[u8],
    replace: bool,
) -> Result<()> {
    let key = bucket_key(bucket, relative);
    let mut put = (bucket.client.put_object())
        .bucket(&bucket.place.bucket)
        .key(&key)
        .content_length(bytes.len() as i64)
        // The algorithm named as well as its value: a bucket with Object Lock requires it.
        .checksum_algorithm(aws_sdk_s3::types::ChecksumAlgorithm::Sha256)
        .body(ByteStream::from(bytes.to_vec()));
    if !replace {
        // Refused by the server when an object is there (S3's conditional write).
        put = put.if_none_match("*");
    }
    if let Some(lock) = bucket.place.lock {
        let days = lock.days.clamp(1, DOCUMENT_LOCK_DAYS);
        let until = kluis_core::clock::now_ms() + i64::from(days) * 86_400_000;
        put = (put.object_lock_mode(aws_sdk_s3::types::ObjectLockMode::Governance))
            .object_lock_retain_until_date(aws_sdk_s3::primitives::DateTime::from_millis(until));
    }
    put.send()
        .await
        .map(|_| ())
        .map_err(|e| s3::connect::failure(e).said(&bucket.name, &format!("write {key}")))
}

pub(super) async fn bucket_get(
    bucket: &s3::Bucket,
    relative: &str,
    most: u64,
) -> Result<Option<Vec<u8>>> {
    let key = bucket_key(bucket, relative);
    let got = (bucket.client.get_object())
        .bucket(&bucket.place.bucket)
        .key(&key)
        .send()
        .await;
    let mut object = match got {
        Ok(object) => object,
        Err(e) if s3::connect::is_not_found(&e) => return Ok(None),
        Err(e) => return Err(s3::connect::failure(e).said(&bucket.name, &format!("read {key}"))),
    };
    let mut bytes = Vec::new();
    while let Some(chunk) = object.body.try_next().await.map_err(|e| {
        Error::Network(format!(
            "Copy target \"{}\": reading {key} stopped ({e}).",
            bucket.name
        ))
    })? {
        bytes.extend_from_slice(&chunk);
        if bytes.len() as u64 > most {
            break;
        }
    }
    Ok(Some(bytes))
}

pub(super) async fn bucket_list(bucket: &s3::Bucket, relative: &str) -> Result<Vec<(String, u64)>> {
    let root = bucket_key(bucket, "x");
    let root = &root[..root.len() - 1]; // the prefix with its slash (or nothing)
    let under = match relative {
        "" => root.to_string(),
        r => format!("{root}{r}/"),
    };
    let mut found = Vec::new();
    let mut pages = (bucket.client.list_objects_v2())
        .bucket(&bucket.place.bucket)
        .prefix(&under)
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        let page =
            page.map_err(|e| s3::connect::failure(e).said(&bucket.name, "list the copies"))?;
        for object in page.contents() {
            let (Some(key), Some(size)) = (object.key(), object.size()) else {
                continue;
            };
            if let Some(name) = key.strip_prefix(root) {
                found.push((name.to_string(), size.max(0) as u64));
            }
        }
    }
    Ok(found)
}
