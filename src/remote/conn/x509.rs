//! What libpq's certificate checks read of an X.509 certificate, through
//! the `x509-cert` crate: names (subjectAltName, the Common Name), validity,
//! whether it may issue certificates, and what its issuer signed; and
//! libpq's rules for matching a host name against those names.

use std::net::IpAddr;

use rustls::pki_types::SignatureVerificationAlgorithm;
use x509_cert::der::asn1::AnyRef;
use x509_cert::der::oid::AssociatedOid;
use x509_cert::der::oid::db::rfc4519::CN;
use x509_cert::der::{Decode, Encode, Reader, SliceReader, Tag, Tagged};
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{BasicConstraints, KeyUsage, NameConstraints, SubjectAltName};
use x509_cert::name::Name;
use x509_cert::spki::AlgorithmIdentifierOwned;
use x509_cert::time::Time;
use x509_cert::{Certificate, Version};

/// The parts of an X.509 certificate that libpq's checks read.
#[derive(Debug, Default, PartialEq)]
pub(super) struct CertInfo {
    /// 1, 2 or 3.
    pub(super) version: u8,
    /// The whole tbsCertificate element as encoded: what the issuer signed.
    pub(super) tbs: Vec<u8>,
    /// The contents of signatureAlgorithm, and the signature.
    pub(super) sig_alg: Vec<u8>,
    pub(super) signature: Vec<u8>,
    /// The issuer's and the subject's Names (equal when their DER is).
    pub(super) issuer: Name,
    pub(super) subject: Name,
    /// The contents of the public key's AlgorithmIdentifier, and the key.
    pub(super) key_alg: Vec<u8>,
    pub(super) key: Vec<u8>,
    /// The subject's first Common Name, as stored.
    pub(super) cn: Option<Vec<u8>>,
    /// subjectAltName dNSName entries.
    pub(super) dns: Vec<Vec<u8>>,
    /// subjectAltName iPAddress entries (4 or 16 bytes).
    pub(super) ips: Vec<Vec<u8>>,
    /// Validity, in seconds since the epoch.
    pub(super) not_before: i64,
    pub(super) not_after: i64,
    /// basicConstraints cA.
    pub(super) is_ca: bool,
    /// keyUsage keyCertSign, where there is a keyUsage.
    pub(super) cert_sign: Option<bool>,
    /// Whether there are nameConstraints.
    pub(super) name_constraints: bool,
}

impl CertInfo {
    /// Reads a DER certificate; `None` if it is not one.
    pub(super) fn parse(der: &[u8]) -> Option<CertInfo> {
        let cert = Certificate::from_der(der).ok()?;
        let tbs = cert.tbs_certificate;
        let spki = tbs.subject_public_key_info;
        let mut info = CertInfo {
            version: match tbs.version {
                Version::V1 => 1,
                Version::V2 => 2,
                Version::V3 => 3,
            },
            tbs: signed_part(der)?.to_vec(),
            sig_alg: alg_id(&cert.signature_algorithm)?,
            signature: cert.signature.as_bytes()?.to_vec(),
            key_alg: alg_id(&spki.algorithm)?,
            key: spki.subject_public_key.as_bytes()?.to_vec(),
            not_before: unix_time(tbs.validity.not_before)?,
            not_after: unix_time(tbs.validity.not_after)?,
            cn: common_name(&tbs.subject),
            issuer: tbs.issuer,
            subject: tbs.subject,
            ..CertInfo::default()
        };
        for ext in tbs.extensions.iter().flatten() {
            let value = ext.extn_value.as_bytes();
            match ext.extn_id {
                SubjectAltName::OID => {
                    for name in SubjectAltName::from_der(value).ok()?.0 {
                        match name {
                            GeneralName::DnsName(n) => info.dns.push(n.as_bytes().to_vec()),
                            GeneralName::IpAddress(ip) => info.ips.push(ip.as_bytes().to_vec()),
                            _ => {}
                        }
                    }
                }
                BasicConstraints::OID => info.is_ca = BasicConstraints::from_der(value).ok()?.ca,
                KeyUsage::OID => {
                    info.cert_sign = Some(KeyUsage::from_der(value).ok()?.key_cert_sign());
                }
                NameConstraints::OID => info.name_constraints = true,
                _ => {}
            }
        }
        Some(info)
    }

    /// Whether OpenSSL would take this trusted certificate as the issuer of
    /// another: a CA allowed to sign certificates, unconstrained here; or a
    /// self-signed version 1 certificate.
    pub(super) fn can_issue(&self) -> bool {
        if self.version == 1 {
            return self.issuer == self.subject;
        }
        self.is_ca && self.cert_sign != Some(false) && !self.name_constraints
    }

    /// Whether `issuer`'s key made this certificate's signature.
    pub(super) fn signed_by(
        &self,
        issuer: &CertInfo,
        algs: &[&dyn SignatureVerificationAlgorithm],
    ) -> bool {
        algs.iter().any(|alg| {
            alg.public_key_alg_id().as_ref() == issuer.key_alg.as_slice()
                && alg.signature_alg_id().as_ref() == self.sig_alg.as_slice()
                && alg
                    .verify_signature(&issuer.key, &self.tbs, &self.signature)
                    .is_ok()
        })
    }

    /// libpq's host name check: the subjectAltName entries of the host's
    /// kind (a DNS name, or an IP address), else the Common Name.
    pub(super) fn matches_host(&self, host: &str) -> bool {
        let ip: Option<IpAddr> = host.parse().ok();
        let mut check_cn = true;
        match ip {
            Some(ip) => {
                check_cn = self.ips.is_empty();
                let want: Vec<u8> = match ip {
                    IpAddr::V4(v4) => v4.octets().to_vec(),
                    IpAddr::V6(v6) => v6.octets().to_vec(),
                };
                if self.ips.contains(&want) {
                    return true;
                }
            }
            None => {
                if !self.dns.is_empty() {
                    check_cn = false;
                }
                if self.dns.iter().any(|name| name_matches(name, host)) {
                    return true;
                }
            }
        }
        check_cn && self.cn.as_deref().is_some_and(|cn| name_matches(cn, host))
    }

    /// The names the certificate is valid for, for messages.
    pub(super) fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .dns
            .iter()
            .map(|n| format!("DNS name \"{}\"", String::from_utf8_lossy(n)))
            .collect();
        for ip in &self.ips {
            let addr = match ip.len() {
                4 => <[u8; 4]>::try_from(ip.as_slice()).ok().map(IpAddr::from),
                16 => <[u8; 16]>::try_from(ip.as_slice()).ok().map(IpAddr::from),
                _ => None,
            };
            if let Some(addr) = addr {
                names.push(format!("IP address {addr}"));
            }
        }
        if names.is_empty()
            && let Some(cn) = &self.cn
        {
            names.push(format!("common name \"{}\"", String::from_utf8_lossy(cn)));
        }
        names
    }
}

/// libpq's name match: equal ignoring ASCII case, or a `*.` wildcard that
/// stands for exactly the first label. A name holding a NUL never matches.
pub(super) fn name_matches(name: &[u8], host: &str) -> bool {
    let host = host.as_bytes();
    if name.contains(&0) {
        return false;
    }
    if name.eq_ignore_ascii_case(host) {
        return true;
    }
    let (lenpat, lenstr) = (name.len(), host.len());
    if lenpat < 3 || !name.starts_with(b"*.") || lenpat > lenstr {
        return false;
    }
    if !name[1..].eq_ignore_ascii_case(&host[lenstr - lenpat + 1..]) {
        return false;
    }
    host.iter()
        .position(|&b| b == b'.')
        .is_none_or(|dot| dot >= lenstr - lenpat)
}

/// The tbsCertificate element of a certificate as it is encoded: what the
/// issuer signed. (Encoding the decoded one again may give other bytes:
/// `der` sorts the elements of a SET OF as it reads them.)
fn signed_part(der: &[u8]) -> Option<&[u8]> {
    SliceReader::new(der)
        .ok()?
        .sequence(|cert| {
            let tbs = cert.tlv_bytes()?;
            cert.decode::<AnyRef<'_>>()?; // signatureAlgorithm
            cert.decode::<AnyRef<'_>>()?; // signatureValue
            Ok(tbs)
        })
        .ok()
}

/// The contents of an AlgorithmIdentifier (its algorithm and parameters, as
/// rustls's algorithm identifiers hold them).
fn alg_id(alg: &AlgorithmIdentifierOwned) -> Option<Vec<u8>> {
    let mut out = alg.oid.to_der().ok()?;
    if let Some(parameters) = &alg.parameters {
        parameters.encode_to_vec(&mut out).ok()?;
    }
    Some(out)
}

/// A validity time in seconds since the epoch.
pub(super) fn unix_time(t: Time) -> Option<i64> {
    i64::try_from(t.to_unix_duration().as_secs()).ok()
}

/// The first Common Name of a Name, as stored; `None` also where it is not
/// a string.
fn common_name(name: &Name) -> Option<Vec<u8>> {
    let value = &name
        .0
        .iter()
        .flat_map(|rdn| rdn.0.iter())
        .find(|atv| atv.oid == CN)?
        .value;
    matches!(
        value.tag(),
        Tag::Utf8String
            | Tag::PrintableString
            | Tag::TeletexString
            | Tag::Ia5String
            | Tag::VisibleString
    )
    .then(|| value.value().to_vec())
}
