//! [`ServiceConnection`]: one service's signed-in session and its downloader, made once per
//! service settings and shared by every job against it.

use std::sync::Arc;

use crate::config::ServiceConfig;
use crate::download::{DownloadOptions, Downloader};
use crate::error::Result;
use crate::session::Session;
use crate::ServiceClient;

pub struct ServiceConnection {
    pub session: Arc<Session>,
    pub downloader: Arc<Downloader>,
}

impl ServiceConnection {
    /// The one constructor: the downloader and the service client share `config`'s TLS trust
    /// (its extra CAs) and timeouts.
    pub fn open(config: ServiceConfig, options: DownloadOptions) -> Result<Self> {
        Ok(Self {
            downloader: Arc::new(Downloader::new(&config, options)?),
            session: Arc::new(Session::new(ServiceClient::new(config)?)),
        })
    }

    pub fn config(&self) -> &ServiceConfig {
        self.session.client().config()
    }
}
