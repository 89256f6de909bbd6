//! HTTP/1.1 servers for the network suites, on any loopback address (127.0.0.1, 127.0.0.2,
//! ::1, ...): each logs every connection the moment it is accepted, before reading a byte,
//! so a test can assert that a forbidden address was never reached at all.

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request as the server read it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// The request target: path and query.
    pub target: String,
    /// Lowercase names.
    pub headers: Vec<(String, String)>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// A response to send.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Response {
        Response { status, headers: vec![("Content-Type".into(), content_type.into())], body: body.into() }
    }

    pub fn redirect(location: &str) -> Response {
        Response {
            status: 302,
            headers: vec![("Location".into(), location.into())],
            body: b"redirect body".to_vec(),
        }
    }

    fn bytes(&self) -> Vec<u8> {
        let reason = match self.status {
            200 => "OK",
            302 => "Found",
            404 => "Not Found",
            _ => "Status",
        };
        let mut head = format!(
            "HTTP/1.1 {} {reason}\r\nContent-Length: {}\r\nConnection: close\r\n",
            self.status,
            self.body.len()
        );
        for (k, v) in &self.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        let mut out = head.into_bytes();
        out.extend_from_slice(&self.body);
        out
    }
}

type Handler = dyn Fn(&Request) -> Response + Send + Sync;

/// A server and its logs.
pub struct WebServer {
    pub addr: SocketAddr,
    /// The peer of every accepted connection, in order.
    connections: Arc<Mutex<Vec<SocketAddr>>>,
    /// Every request read.
    requests: Arc<Mutex<Vec<Request>>>,
}

impl WebServer {
    /// Binds `ip` on a free port, or on `port` when given.
    pub fn start(
        ip: &str,
        port: Option<u16>,
        handler: impl Fn(&Request) -> Response + Send + Sync + 'static,
    ) -> WebServer {
        Self::try_start(ip, port, handler).unwrap_or_else(|e| panic!("cannot listen on {ip}: {e}"))
    }

    /// Like [`WebServer::start`], failing when the address cannot be bound (IPv6 off).
    pub fn try_start(
        ip: &str,
        port: Option<u16>,
        handler: impl Fn(&Request) -> Response + Send + Sync + 'static,
    ) -> std::io::Result<WebServer> {
        let ip: IpAddr = ip.parse().expect("an IP address");
        let listener = TcpListener::bind(SocketAddr::new(ip, port.unwrap_or(0)))?;
        let addr = listener.local_addr()?;
        let connections = Arc::new(Mutex::new(Vec::new()));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let (c2, r2) = (connections.clone(), requests.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                if let Ok(peer) = stream.peer_addr() {
                    c2.lock().unwrap().push(peer);
                }
                let (requests, handler) = (r2.clone(), handler.clone());
                std::thread::spawn(move || serve(stream, &requests, &*handler));
            }
        });
        Ok(WebServer { addr, connections, requests })
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://<addr><path>`, with brackets for IPv6.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// How many connections were accepted.
    pub fn connections(&self) -> usize {
        self.connections.lock().unwrap().len()
    }

    /// Every request read so far.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve(mut stream: TcpStream, log: &Mutex<Vec<Request>>, handler: &Handler) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.lines();
    let mut first = lines.next().unwrap_or("").split(' ');
    let method = first.next().unwrap_or("").to_string();
    let target = first.next().unwrap_or("").to_string();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let req = Request { method, target, headers };
    log.lock().unwrap().push(req.clone());
    let _ = stream.write_all(&handler(&req).bytes());
}
