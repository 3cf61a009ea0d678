//! A stand-in for an office's mail server: a real SMTP server's protocol (mailin, the state
//! machine of the `mailin-embedded` server) over tokio on loopback, with STARTTLS by
//! tokio-rustls and a certificate from a fresh CA. It records the logins it was offered and
//! the mails it accepted, for tests of Kluis's e-mail (nothing of the client is mocked).
//!
//! With `starttls` it offers STARTTLS and logins only after it, as a careful server does;
//! without, it is a plain-text server that even offers a login unencrypted — which Kluis
//! must never use.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use kluis_https::cert::LocalCa;
use mailin::{Action, Handler, Response, SessionBuilder};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// The login the sink accepts (with the password given to [`SmtpSink::start`]).
pub const USER: &str = "kluis";

/// What the sink saw.
#[derive(Debug, Default, Clone)]
pub struct Seen {
    /// The logins tried (user, password) and whether TLS was on at the time.
    pub logins: Vec<(String, String, bool)>,
    pub mails: Vec<Received>,
}

/// One accepted mail: the envelope and the message as sent.
#[derive(Debug, Default, Clone)]
pub struct Received {
    pub from: String,
    pub to: Vec<String>,
    pub data: String,
}

struct Sink {
    seen: Arc<Mutex<Seen>>,
    /// Set once the connection is encrypted.
    tls: Arc<AtomicBool>,
    password: &'static str,
    current: Received,
}

impl Handler for Sink {
    fn data_start(&mut self, _domain: &str, from: &str, _8bit: bool, to: &[String]) -> Response {
        self.current = Received {
            from: from.into(),
            to: to.to_vec(),
            data: String::new(),
        };
        mailin::response::OK
    }

    fn data(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.current.data.push_str(&String::from_utf8_lossy(buf));
        Ok(())
    }

    fn data_end(&mut self) -> Response {
        let mail = std::mem::take(&mut self.current);
        self.seen.lock().unwrap().mails.push(mail);
        mailin::response::OK
    }

    fn auth_plain(&mut self, _authz: &str, user: &str, password: &str) -> Response {
        self.login(user, password)
    }

    fn auth_login(&mut self, user: &str, password: &str) -> Response {
        self.login(user, password)
    }
}

impl Sink {
    fn login(&mut self, user: &str, password: &str) -> Response {
        let mut seen = self.seen.lock().unwrap();
        seen.logins.push((
            user.into(),
            password.into(),
            self.tls.load(Ordering::SeqCst),
        ));
        if user == USER && password == self.password {
            mailin::response::AUTH_OK
        } else {
            // A careless server that echoes what it refused: no secret may reach an error.
            Response::custom(
                535,
                format!("5.7.8 Authentication failed for {user} with password {password}"),
            )
        }
    }
}

/// A loopback SMTP server (see the module's text).
pub struct SmtpSink {
    pub addr: SocketAddr,
    /// The CA that signed its certificate (for `127.0.0.1`).
    pub ca_pem: String,
    seen: Arc<Mutex<Seen>>,
}

impl SmtpSink {
    /// Listens on a free loopback port, accepting [`USER`] with `password`.
    pub async fn start(starttls: bool, password: &'static str) -> SmtpSink {
        let ca = LocalCa::generate("Kluis test mail CA").unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(ca.server_config(&["127.0.0.1"]).unwrap());
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Seen::default()));
        let mut builder = SessionBuilder::new("sink.test");
        builder
            .enable_auth(mailin::AuthMechanism::Plain)
            .enable_auth(mailin::AuthMechanism::Login);
        if starttls {
            builder.enable_start_tls();
        } else {
            builder.insecure_enable_plaintext_auth();
        }
        let shared = seen.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, peer)) = listener.accept().await else {
                    return;
                };
                let (builder, acceptor, seen) = (builder.clone(), acceptor.clone(), shared.clone());
                tokio::spawn(async move {
                    let tls_on = Arc::new(AtomicBool::new(false));
                    let sink = Sink {
                        seen,
                        tls: tls_on.clone(),
                        password,
                        current: Received::default(),
                    };
                    let mut session = builder.build(peer.ip(), sink);
                    let mut stream = BufReader::new(stream);
                    let greeting = session.greeting().buffer().unwrap();
                    stream.get_mut().write_all(&greeting).await.unwrap();
                    if !converse(&mut stream, &mut session).await {
                        return;
                    }
                    let Ok(tls) = acceptor.accept(stream.into_inner()).await else {
                        return;
                    };
                    tls_on.store(true, Ordering::SeqCst);
                    session.tls_active();
                    let mut stream = BufReader::new(tls);
                    let _ = converse(&mut stream, &mut session).await;
                });
            }
        });
        SmtpSink {
            addr,
            ca_pem: ca.ca_pem(),
            seen,
        }
    }

    /// What it saw so far.
    pub fn seen(&self) -> Seen {
        self.seen.lock().unwrap().clone()
    }
}

/// Answers the client line by line until it ends (false) or asks for TLS (true).
async fn converse<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut BufReader<S>,
    session: &mut mailin::Session<Sink>,
) -> bool {
    let mut line = Vec::new();
    loop {
        line.clear();
        match stream.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return false,
            Ok(_) => {}
        }
        let response = session.process(&line);
        if response.action != Action::NoReply {
            let bytes = response.buffer().unwrap();
            if stream.get_mut().write_all(&bytes).await.is_err() {
                return false;
            }
        }
        match response.action {
            Action::Close => return false,
            Action::UpgradeTls => return true,
            Action::Reply | Action::NoReply => {}
        }
    }
}
