//! sslmode as a rustls configuration (ring provider), with the certificate
//! checks libpq makes through OpenSSL: none, the chain, or the chain and the
//! host name. webpki checks the chain first; what it refuses and OpenSSL
//! accepts (a version 1 server certificate, a self-signed CA certificate as
//! the server's) is checked against the root file's certificates directly.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::verify_server_cert_signed_by_trust_anchor;
use rustls::crypto::{
    WebPkiSupportedAlgorithms, ring, verify_tls12_signature, verify_tls13_signature,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::x509::CertInfo;
use super::{Settings, Ssl};

/// The TLS connector for `s.sslmode`, and the root file it checks against.
pub(super) fn tls_setup(s: &Settings) -> Result<(MakeRustlsConnect, Option<PathBuf>), String> {
    let provider = Arc::new(ring::default_provider());
    let algs = provider.signature_verification_algorithms;
    let root =
        match s.sslmode {
            Ssl::Disable | Ssl::Allow | Ssl::Prefer => None,
            // libpq checks the chain in require mode whenever a root file exists.
            Ssl::Require => s
                .sslrootcert
                .clone()
                .or_else(|| s.default_rootcert.clone())
                .filter(|p| p.exists()),
            Ssl::VerifyCa | Ssl::VerifyFull => {
                let path = s.sslrootcert.clone().or_else(|| s.default_rootcert.clone()).ok_or(
                "cannot find the home directory to locate the root certificate file; either \
                 provide the file, use the sslrootcert parameter, or change sslmode to disable \
                 server certificate verification",
            )?;
                if path.as_os_str() == "system" {
                    return Err(
                        "sslrootcert=system (the operating system's CA certificates) is \
                            not supported: name a file of CA certificates"
                            .into(),
                    );
                }
                if !path.exists() {
                    return Err(format!(
                        "root certificate file \"{}\" does not exist; either provide the file, use \
                     the sslrootcert parameter, or change sslmode to disable server \
                     certificate verification",
                        path.display()
                    ));
                }
                Some(path)
            }
        };
    let verifier: Arc<dyn ServerCertVerifier> = match &root {
        None => Arc::new(NoVerify { algs }),
        Some(path) => {
            let pinned = load_certs(path)?;
            let mut roots = RootCertStore::empty();
            let (added, _) = roots.add_parsable_certificates(pinned.iter().cloned());
            if added == 0 {
                return Err(format!(
                    "none of the certificates in {} can serve as a root certificate",
                    path.display()
                ));
            }
            Arc::new(LibpqVerifier {
                roots: Arc::new(roots),
                pinned,
                check_name: s.sslmode == Ssl::VerifyFull,
                algs,
            })
        }
    };
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("setting TLS up: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok((MakeRustlsConnect::new(config), root))
}

/// The PEM certificates in `path`.
fn load_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|iter| iter.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("reading root certificates from {}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{} holds no PEM certificate", path.display()));
    }
    Ok(certs)
}

/// Checks the server's signature of the handshake with its certificate's
/// key, as rustls does; where webpki cannot read the certificate (a version
/// 1 one, which OpenSSL reads), with the key as [`CertInfo`] reads it.
fn handshake_signature(
    message: &[u8],
    cert: &CertificateDer<'_>,
    dss: &DigitallySignedStruct,
    algs: &WebPkiSupportedAlgorithms,
    tls13: bool,
) -> Result<HandshakeSignatureValid, rustls::Error> {
    let standard = if tls13 {
        verify_tls13_signature(message, cert, dss, algs)
    } else {
        verify_tls12_signature(message, cert, dss, algs)
    };
    let err = match standard {
        Err(
            e @ rustls::Error::InvalidCertificate(
                CertificateError::Other(_) | CertificateError::BadEncoding,
            ),
        ) => e,
        other => return other,
    };
    let Some(info) = CertInfo::parse(cert) else {
        return Err(err);
    };
    // (rustls has checked that a TLS 1.3 scheme suits TLS 1.3.)
    let candidates = algs
        .mapping
        .iter()
        .find(|(scheme, _)| *scheme == dss.scheme);
    let verified = candidates.is_some_and(|(_, candidates)| {
        candidates.iter().any(|alg| {
            alg.public_key_alg_id().as_ref() == info.key_alg.as_slice()
                && alg
                    .verify_signature(&info.key, message, dss.signature())
                    .is_ok()
        })
    });
    if verified {
        Ok(HandshakeSignatureValid::assertion())
    } else {
        Err(err)
    }
}

/// The handshake-signature methods of [`ServerCertVerifier`], the same for
/// every verifier here: checked with the provider's algorithms (`self.algs`)
/// whatever the certificate checks were.
macro_rules! handshake_signatures {
    () => {
        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            handshake_signature(message, cert, dss, &self.algs, false)
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            handshake_signature(message, cert, dss, &self.algs, true)
        }

        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            self.algs.supported_schemes()
        }
    };
}

/// Encryption without authentication: sslmode allow, prefer, and require
/// without a root file. The handshake's signatures are still checked.
#[derive(Debug)]
struct NoVerify {
    algs: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    handshake_signatures!();
}

/// verify-ca (the chain) and verify-full (the chain and the host name), as
/// libpq checks them with OpenSSL.
#[derive(Debug)]
pub(super) struct LibpqVerifier {
    pub(super) roots: Arc<RootCertStore>,
    /// The root file's certificates as they are, for what webpki refuses.
    pub(super) pinned: Vec<CertificateDer<'static>>,
    pub(super) check_name: bool,
    pub(super) algs: WebPkiSupportedAlgorithms,
}

impl LibpqVerifier {
    /// The chain up to a root, by webpki; else, as OpenSSL would accept it,
    /// a server certificate issued directly by a certificate of the root
    /// file, or that is itself one of them.
    ///
    /// webpki refuses what the PostgreSQL manual's recipes make and libpq
    /// accepts: a self-signed CA certificate as the server's, and a version 1
    /// server certificate (what `openssl x509 -req` makes without
    /// extensions). Certificates through intermediates are webpki's alone.
    fn verify_chain(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<(), rustls::Error> {
        let err = match ParsedCertificate::try_from(end_entity) {
            Ok(parsed) => match verify_server_cert_signed_by_trust_anchor(
                &parsed,
                &self.roots,
                intermediates,
                now,
                self.algs.all,
            ) {
                Ok(()) => return Ok(()),
                Err(e) => e,
            },
            Err(e) => e,
        };
        match self.issued_by_root(end_entity, now) {
            Some(result) => result,
            None => Err(match err {
                rustls::Error::InvalidCertificate(CertificateError::Other(other)) => {
                    CertificateError::Other(rustls::OtherError(Arc::new(io::Error::other(
                        format!("no certificate of the root file issued it ({other})"),
                    ))))
                    .into()
                }
                e => e,
            }),
        }
    }

    /// Whether a certificate of the root file issued `end_entity` (or is
    /// it), and if so whether both are within their validity periods.
    fn issued_by_root(
        &self,
        end_entity: &CertificateDer<'_>,
        now: UnixTime,
    ) -> Option<Result<(), rustls::Error>> {
        let cert = CertInfo::parse(end_entity)?;
        let t = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
        for root_der in &self.pinned {
            let Some(root) = CertInfo::parse(root_der) else {
                continue;
            };
            let itself = root_der.as_ref() == end_entity.as_ref();
            if root.subject != cert.issuer
                || !(itself || root.can_issue())
                || !cert.signed_by(&root, self.algs.all)
            {
                continue;
            }
            for c in [&cert, &root] {
                if t < c.not_before {
                    return Some(Err(CertificateError::NotValidYet.into()));
                }
                if t > c.not_after {
                    return Some(Err(CertificateError::Expired.into()));
                }
            }
            return Some(Ok(()));
        }
        None
    }
}

impl ServerCertVerifier for LibpqVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.verify_chain(end_entity, intermediates, now)?;
        if self.check_name {
            let info = CertInfo::parse(end_entity).ok_or(CertificateError::BadEncoding)?;
            if !info.matches_host(&server_name.to_str()) {
                return Err(CertificateError::NotValidForNameContext {
                    expected: server_name.to_owned(),
                    presented: info.names(),
                }
                .into());
            }
        }
        Ok(ServerCertVerified::assertion())
    }

    handshake_signatures!();
}
