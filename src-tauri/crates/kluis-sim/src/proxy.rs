//! A stand-in for what sits between the service and a Kluis listener in a real office: a
//! reverse proxy (or a tunnel's edge) that terminates TLS with its own certificate and
//! forwards the bytes to a plain-HTTP address.

use std::net::SocketAddr;

/// Forwards TLS connections on a new 127.0.0.1 port to `target`; returns the port and the PEM
/// of the CA (named `name`) behind its certificate. It runs until the runtime ends.
pub async fn tls_front(target: SocketAddr, name: &str) -> std::io::Result<(u16, String)> {
    let ca = kluis_https::LocalCa::generate(name).map_err(std::io::Error::other)?;
    let tls = ca
        .server_config(&["127.0.0.1"])
        .map_err(std::io::Error::other)?;
    let acceptor = tokio_rustls::TlsAcceptor::from(tls);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let Ok(mut upstream) = tokio::net::TcpStream::connect(target).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut upstream).await;
            });
        }
    });
    Ok((port, ca.ca_pem()))
}
