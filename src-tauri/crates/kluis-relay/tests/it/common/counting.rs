//! A store that counts the queries a request costs: the relay on it should not touch the
//! database for junk.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use kluis_relay::storage::{
    Event, InviteMade, KeyCheck, Limits, OfficeStore, PcSummary, Quota, Recorded, Refusal,
    StoreError, StoredKey, StoredReport, TenantSummary, Turn, Wake,
};
use kluis_relay::Storage;

/// `inner`, with every call counted in `calls`.
pub struct CountingStore<S> {
    pub inner: S,
    pub calls: Arc<AtomicU64>,
}

impl<S> CountingStore<S> {
    fn count(&self) {
        self.calls.fetch_add(1, Ordering::Relaxed);
    }
}

#[async_trait]
impl<S: Storage> Storage for CountingStore<S> {
    fn engine(&self) -> &'static str {
        self.inner.engine()
    }
    fn watch(&self, wake: Wake) -> Option<tokio::task::JoinHandle<()>> {
        self.inner.watch(wake)
    }
    async fn ping(&self) -> Result<(), StoreError> {
        self.count();
        self.inner.ping().await
    }
    async fn add_tenant(
        &self,
        name: &str,
        quota: Quota,
        key_id: &str,
        key_hash: [u8; 32],
    ) -> Result<bool, StoreError> {
        self.count();
        self.inner.add_tenant(name, quota, key_id, key_hash).await
    }
    async fn tenants(&self) -> Result<Vec<TenantSummary>, StoreError> {
        self.count();
        self.inner.tenants().await
    }
    async fn revoke_tenant(&self, name: &str) -> Result<bool, StoreError> {
        self.count();
        self.inner.revoke_tenant(name).await
    }
    async fn rotate_key(
        &self,
        name: &str,
        key_id: &str,
        key_hash: [u8; 32],
        old_until_ms: i64,
    ) -> Result<bool, StoreError> {
        self.count();
        (self.inner)
            .rotate_key(name, key_id, key_hash, old_until_ms)
            .await
    }
    async fn key_ids(&self) -> Result<Vec<String>, StoreError> {
        self.count();
        self.inner.key_ids().await
    }
    fn keys_version(&self) -> u128 {
        self.inner.keys_version()
    }
    async fn key(&self, key_id: &str) -> Result<Option<StoredKey>, StoreError> {
        self.count();
        self.inner.key(key_id).await
    }
    async fn callback_key(&self, fresh: [u8; 32]) -> Result<[u8; 32], StoreError> {
        self.count();
        self.inner.callback_key(fresh).await
    }
    async fn create_inbox(
        &self,
        tenant: &str,
        quota: &Quota,
        id: &str,
        token: &str,
    ) -> Result<Result<(), Refusal>, StoreError> {
        self.count();
        self.inner.create_inbox(tenant, quota, id, token).await
    }
    async fn record(
        &self,
        inbox: &str,
        token: &str,
        method: &str,
        query: &str,
        limits: Limits,
    ) -> Result<Recorded, StoreError> {
        self.count();
        self.inner.record(inbox, token, method, query, limits).await
    }
    async fn events_after(
        &self,
        tenant: &str,
        inbox: &str,
        after: i64,
        limit: usize,
    ) -> Result<Option<Vec<Event>>, StoreError> {
        self.count();
        self.inner.events_after(tenant, inbox, after, limit).await
    }
    async fn ack(&self, tenant: &str, inbox: &str, up_to: i64) -> Result<Option<u64>, StoreError> {
        self.count();
        self.inner.ack(tenant, inbox, up_to).await
    }
    async fn delete_inbox(&self, tenant: &str, inbox: &str) -> Result<bool, StoreError> {
        self.count();
        self.inner.delete_inbox(tenant, inbox).await
    }
    async fn expire(
        &self,
        events_before_ms: i64,
        inboxes_before_ms: i64,
    ) -> Result<(u64, u64), StoreError> {
        self.count();
        self.inner.expire(events_before_ms, inboxes_before_ms).await
    }
}

#[async_trait]
impl<S: Storage> OfficeStore for CountingStore<S> {
    async fn add_pc(
        &self,
        tenant: &str,
        name: &str,
        key_id: &str,
        key_hash: [u8; 32],
    ) -> Result<bool, StoreError> {
        self.count();
        self.inner.add_pc(tenant, name, key_id, key_hash).await
    }
    async fn revoke_pc(&self, tenant: &str, name: &str) -> Result<bool, StoreError> {
        self.count();
        self.inner.revoke_pc(tenant, name).await
    }
    async fn pcs(&self, tenant: &str) -> Result<Vec<PcSummary>, StoreError> {
        self.count();
        self.inner.pcs(tenant).await
    }
    async fn take_turn(
        &self,
        tenant: &str,
        pc: &str,
        klant: &str,
        hold_ms: i64,
        slot_age_ms: i64,
    ) -> Result<Turn, StoreError> {
        self.count();
        (self.inner)
            .take_turn(tenant, pc, klant, hold_ms, slot_age_ms)
            .await
    }
    async fn end_turn(
        &self,
        tenant: &str,
        pc: &str,
        klant: &str,
        backed_up: bool,
    ) -> Result<bool, StoreError> {
        self.count();
        self.inner.end_turn(tenant, pc, klant, backed_up).await
    }
    async fn add_invite(
        &self,
        tenant: &str,
        pc: &str,
        by: &str,
        token_hash: [u8; 32],
        ttl_ms: i64,
    ) -> Result<InviteMade, StoreError> {
        self.count();
        (self.inner)
            .add_invite(tenant, pc, by, token_hash, ttl_ms)
            .await
    }
    async fn redeem_invite(
        &self,
        token_hash: [u8; 32],
        key_id: &str,
        key_hash: [u8; 32],
    ) -> Result<Option<(String, String)>, StoreError> {
        self.count();
        self.inner.redeem_invite(token_hash, key_id, key_hash).await
    }
    async fn put_report(&self, tenant: &str, pc: &str, sealed: &[u8]) -> Result<(), StoreError> {
        self.count();
        self.inner.put_report(tenant, pc, sealed).await
    }
    async fn reports(&self, tenant: &str) -> Result<Vec<StoredReport>, StoreError> {
        self.count();
        self.inner.reports(tenant).await
    }
    async fn record_done(
        &self,
        tenant: &str,
        pc: &str,
        klant: &str,
        ago_ms: i64,
    ) -> Result<bool, StoreError> {
        self.count();
        self.inner.record_done(tenant, pc, klant, ago_ms).await
    }
    async fn check_office_key(
        &self,
        tenant: &str,
        pc: &str,
        check: [u8; 32],
    ) -> Result<KeyCheck, StoreError> {
        self.count();
        self.inner.check_office_key(tenant, pc, check).await
    }
}
