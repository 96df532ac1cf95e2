//! The client side of SCRAM (RFC 5802) with SHA-256 or SHA-512 (RFC 7677), as Kafka's
//! SCRAM-SHA-256 and SCRAM-SHA-512 mechanisms use it: no channel binding (`n,,`), and the
//! server's signature checked so that a server without the credentials cannot pass for the
//! broker.
//!
//! Only the message exchange lives here; sending it over SaslAuthenticate is [`super::sasl`]'s.

use base64::Engine;
use hmac::{KeyInit, Mac};
use sha2::Digest;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// Kafka's smallest iteration count for SCRAM credentials; fewer is refused as a downgrade.
const MIN_ITERATIONS: u32 = 4096;
/// A bound so that a hostile server cannot make the client spin for minutes.
const MAX_ITERATIONS: u32 = 1_000_000;

/// The hash of a SCRAM mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hash {
    Sha256,
    Sha512,
}

impl Hash {
    fn hmac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        match self {
            Hash::Sha256 => hmac::Hmac::<sha2::Sha256>::new_from_slice(key)
                .expect("HMAC takes keys of any length")
                .chain_update(data)
                .finalize()
                .into_bytes()
                .to_vec(),
            Hash::Sha512 => hmac::Hmac::<sha2::Sha512>::new_from_slice(key)
                .expect("HMAC takes keys of any length")
                .chain_update(data)
                .finalize()
                .into_bytes()
                .to_vec(),
        }
    }

    fn digest(self, data: &[u8]) -> Vec<u8> {
        match self {
            Hash::Sha256 => sha2::Sha256::digest(data).to_vec(),
            Hash::Sha512 => sha2::Sha512::digest(data).to_vec(),
        }
    }

    /// RFC 5802's Hi(): PBKDF2 with HMAC as the PRF and a single output block.
    fn hi(self, password: &[u8], salt: &[u8], iterations: u32) -> Vec<u8> {
        let mut first = salt.to_vec();
        first.extend_from_slice(&1u32.to_be_bytes());
        let mut u = self.hmac(password, &first);
        let mut out = u.clone();
        for _ in 1..iterations {
            u = self.hmac(password, &u);
            out.iter_mut().zip(&u).for_each(|(o, x)| *o ^= x);
        }
        out
    }
}

/// One SCRAM exchange, from the client-first message to the check of the server-final one.
pub struct Scram {
    hash: Hash,
    password: String,
    client_nonce: String,
    client_first_bare: String,
    /// HMAC(ServerKey, AuthMessage): what the server must prove in its final message.
    expected_server_signature: Option<Vec<u8>>,
}

// By hand: the password must never reach Debug output.
impl std::fmt::Debug for Scram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scram").field("hash", &self.hash).finish()
    }
}

impl Scram {
    /// Starts an exchange for `username`; `client_nonce` must be fresh and random (printable,
    /// no commas).
    pub fn new(hash: Hash, username: &str, password: &str, client_nonce: &str) -> Scram {
        // RFC 5802 5.1: '=' and ',' in the name are escaped.
        let name = username.replace('=', "=3D").replace(',', "=2C");
        Scram {
            hash,
            password: password.to_string(),
            client_nonce: client_nonce.to_string(),
            client_first_bare: format!("n={name},r={client_nonce}"),
            expected_server_signature: None,
        }
    }

    /// A fresh client nonce: 24 random bytes, base64.
    pub fn nonce() -> String {
        B64.encode(rand::random::<[u8; 24]>())
    }

    /// The client-first message (no channel binding, no authorization id).
    pub fn client_first(&self) -> String {
        format!("n,,{}", self.client_first_bare)
    }

    /// Reads the server-first message and returns the client-final one (with the proof).
    pub fn client_final(&mut self, server_first: &str) -> Result<String, String> {
        let attr = |name: char| attribute(server_first, name);
        if let Some(e) = attr('e') {
            return Err(format!("the broker refused the exchange: {e}"));
        }
        let nonce = attr('r').ok_or("the broker's first SCRAM message has no nonce")?;
        if !nonce.starts_with(&self.client_nonce) || nonce.len() == self.client_nonce.len() {
            return Err("the broker's SCRAM nonce does not extend ours".to_string());
        }
        let salt = attr('s')
            .and_then(|s| B64.decode(s).ok())
            .ok_or("the broker's first SCRAM message has no valid salt")?;
        let iterations: u32 = attr('i')
            .and_then(|i| i.parse().ok())
            .ok_or("the broker's first SCRAM message has no valid iteration count")?;
        if !(MIN_ITERATIONS..=MAX_ITERATIONS).contains(&iterations) {
            return Err(format!(
                "the broker asked for {iterations} SCRAM iterations (accepted: {MIN_ITERATIONS} to {MAX_ITERATIONS})"
            ));
        }
        let h = self.hash;
        let salted = h.hi(self.password.as_bytes(), &salt, iterations);
        let client_key = h.hmac(&salted, b"Client Key");
        let stored_key = h.digest(&client_key);
        // "biws" is base64 of "n,,": the GS2 header, no channel binding.
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{},{server_first},{without_proof}", self.client_first_bare);
        let client_signature = h.hmac(&stored_key, auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&client_signature)
            .map(|(k, s)| k ^ s)
            .collect();
        let server_key = h.hmac(&salted, b"Server Key");
        self.expected_server_signature = Some(h.hmac(&server_key, auth_message.as_bytes()));
        Ok(format!("{without_proof},p={}", B64.encode(proof)))
    }

    /// Checks the server-final message: the server proves it knows the credentials too.
    pub fn verify_server_final(&self, server_final: &str) -> Result<(), String> {
        if let Some(e) = attribute(server_final, 'e') {
            return Err(format!("the broker refused the exchange: {e}"));
        }
        let expected = self
            .expected_server_signature
            .as_ref()
            .ok_or("the SCRAM exchange is out of order")?;
        match attribute(server_final, 'v').and_then(|v| B64.decode(v).ok()) {
            Some(v) if v == *expected => Ok(()),
            Some(_) => Err(
                "the broker's SCRAM signature is wrong: it does not hold these credentials (is it the broker you meant?)"
                    .to_string(),
            ),
            None => Err("the broker's final SCRAM message has no signature".to_string()),
        }
    }
}

/// The value of attribute `name` in a SCRAM message (`a=value,b=value`).
fn attribute(message: &str, name: char) -> Option<&str> {
    message.split(',').find_map(|part| {
        let mut chars = part.chars();
        (chars.next() == Some(name) && chars.next() == Some('=')).then(|| &part[2..])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7677 section 3's example exchange.
    #[test]
    fn rfc7677_sha256_vector() {
        let mut s = Scram::new(Hash::Sha256, "user", "pencil", "rOprNGfwEbeRWgbNEkqO");
        assert_eq!(s.client_first(), "n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        let last = s
            .client_final("r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
            .unwrap();
        assert_eq!(
            last,
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        s.verify_server_final("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap();
        let wrong = s
            .verify_server_final("v=AAAATRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap_err();
        assert!(wrong.contains("signature is wrong"), "{wrong}");
    }

    #[test]
    fn sha512_round_trip_with_a_simulated_server() {
        // The server side computed independently from the stored key, as a broker holds it.
        let (salt, iterations) = (b"salt-bytes".to_vec(), 4096);
        let h = Hash::Sha512;
        let salted = h.hi(b"pw", &salt, iterations);
        let stored_key = h.digest(&h.hmac(&salted, b"Client Key"));
        let mut s = Scram::new(h, "a=b,c", "pw", "nonce1");
        assert_eq!(s.client_first(), "n,,n=a=3Db=2Cc,r=nonce1");
        let server_first = format!("r=nonce1xyz,s={},i={iterations}", B64.encode(&salt));
        let last = s.client_final(&server_first).unwrap();
        let proof = B64.decode(attribute(&last, 'p').unwrap()).unwrap();
        let auth = format!("n=a=3Db=2Cc,r=nonce1,{server_first},c=biws,r=nonce1xyz");
        let signature = h.hmac(&stored_key, auth.as_bytes());
        let client_key: Vec<u8> = proof.iter().zip(&signature).map(|(p, s)| p ^ s).collect();
        assert_eq!(h.digest(&client_key), stored_key, "the proof verifies");
    }

    #[test]
    fn bad_server_messages_are_refused() {
        let mut s = Scram::new(Hash::Sha256, "u", "p", "abc");
        assert!(
            s.client_final("r=xyz,s=AAAA,i=4096").is_err(),
            "foreign nonce"
        );
        assert!(
            s.client_final("r=abc,s=AAAA,i=4096").is_err(),
            "nonce not extended"
        );
        assert!(
            s.client_final("r=abcd,s=AAAA,i=10").is_err(),
            "too few iterations"
        );
        assert!(s.client_final("e=invalid-proof").is_err());
        assert!(s.verify_server_final("v=AAAA").is_err(), "out of order");
        let secret = Scram::new(Hash::Sha512, "u", "hunter2", "abc");
        assert!(!format!("{secret:?}").contains("hunter2"));
    }
}
