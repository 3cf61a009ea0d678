//! A download's address: the file's URL and, for a backup's job, one way to ask the service for
//! it again.
//!
//! The document does not say how long the address in `{data:{url}}` stays valid. A file host
//! that refuses it before the file comes — 401, 403, 404 or 410, as a signed link whose time is
//! up is refused — is most likely answering an address grown old while the job waited (for the
//! office's line, or for a connection that kept failing): the job asks the service once more for
//! the backup's address and the download goes on with the new one. Once only: an address
//! refused again is the error it was, so a host that refuses everything costs one request.

use std::future::Future;

use futures_util::future::BoxFuture;
use url::Url;

/// Where a download's file is, and how to learn it again (once).
pub struct Address<'a> {
    pub(super) url: Url,
    renew: Option<BoxFuture<'a, Option<Url>>>,
}

impl<'a> Address<'a> {
    /// `url`, with no second one to ask for (a file given on the command line, a test).
    pub fn fixed(url: &Url) -> Self {
        Self {
            url: url.clone(),
            renew: None,
        }
    }

    /// `url`, and `renew` to run if the file host refuses it: a fresh address, or `None` when
    /// the service gives none (the refusal then stands). `renew` is only run when needed.
    pub fn renewable(url: &Url, renew: impl Future<Output = Option<Url>> + Send + 'a) -> Self {
        Self {
            url: url.clone(),
            renew: Some(Box::pin(renew)),
        }
    }

    /// Replaces a refused address with a fresh one, if it was not renewed before and the
    /// service gives one; `false` when the refusal stands.
    pub(super) async fn renew(&mut self) -> bool {
        let Some(renew) = self.renew.take() else {
            return false;
        };
        match renew.await {
            Some(fresh) => {
                tracing::info!("the file host refused the file's address; asked for it again");
                self.url = fresh;
                true
            }
            None => false,
        }
    }
}
