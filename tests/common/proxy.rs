//! A TCP proxy for fault tests: forwards every connection it accepts to a target address, and
//! can be told to drop what the target answers, as a network that loses the responses would.
//! When either side closes, so does the other.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub struct Proxy {
    /// Where clients connect: `127.0.0.1:port`.
    pub addr: String,
    dropping: Arc<AtomicBool>,
}

impl Proxy {
    /// Listens on a free port of 127.0.0.1 and forwards to `target` (`host:port`) until the
    /// test process ends.
    pub fn start(target: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("the proxy listens");
        let addr = listener.local_addr().expect("its address").to_string();
        let dropping = Arc::new(AtomicBool::new(false));
        let (target, flag) = (target.to_string(), Arc::clone(&dropping));
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(&target) else {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                };
                let (c, s) = (client.try_clone(), server.try_clone());
                let (Ok(client2), Ok(server2)) = (c, s) else {
                    continue;
                };
                let never = Arc::new(AtomicBool::new(false));
                std::thread::spawn(move || pump(client, server, &never));
                let flag = Arc::clone(&flag);
                std::thread::spawn(move || pump(server2, client2, &flag));
            }
        });
        Proxy { addr, dropping }
    }

    /// From now on, what the target sends is read and thrown away (`true`), or forwarded.
    pub fn drop_answers(&self, on: bool) {
        self.dropping.store(on, Ordering::SeqCst);
    }
}

/// Copies `from` to `to` (nothing while `dropping`) until either fails or ends, then closes
/// both.
fn pump(mut from: TcpStream, mut to: TcpStream, dropping: &AtomicBool) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if !dropping.load(Ordering::SeqCst) && to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}
