use super::*;
use std::ffi::CString;
use std::sync::mpsc;

fn entries_for(w: &Watch) -> usize {
    calls().iter().filter(|e| e.id == w.id).count()
}

/// A thread blocked opening a FIFO no one writes to is interrupted once its deadline and the
/// grace period are past: the open returns EINTR and the watch says it was interrupted.
#[test]
fn a_call_blocked_opening_a_fifo_is_interrupted_past_its_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = CString::new(dir.path().join("pipe").to_str().unwrap()).unwrap();
    // SAFETY: a valid path and mode.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let (done, finished) = mpsc::channel();
    let blocked = std::thread::spawn(move || {
        let w = watch(Instant::now());
        // SAFETY: a valid path; the plain system call, so EINTR is not retried.
        let fd = unsafe { libc::open(fifo.as_ptr(), libc::O_RDONLY) };
        let errno = std::io::Error::last_os_error().raw_os_error();
        let interrupted = w.interrupted();
        drop(w);
        let _ = done.send(());
        (fd, errno, interrupted)
    });
    // What the epoch ticker does: check on every tick until the call has come back.
    let mut ticks = 0;
    while finished.recv_timeout(Duration::from_millis(10)).is_err() {
        check(Instant::now() + GRACE + Duration::from_millis(1));
        ticks += 1;
        assert!(ticks < 1000, "the blocked open was never interrupted");
    }
    let (fd, errno, interrupted) = blocked.join().unwrap();
    assert_eq!(fd, -1);
    assert_eq!(errno, Some(libc::EINTR));
    assert!(interrupted);
}

/// A call within its deadline (or its deadline plus the grace period) is left alone, also
/// once its deadline was moved on; a finished call is no longer watched.
#[test]
fn calls_within_their_deadline_are_left_alone_and_finished_ones_forgotten() {
    let now = Instant::now();
    let w = watch(now + Duration::from_secs(60));
    check(now + Duration::from_secs(60) + GRACE);
    assert!(!w.interrupted());
    let moved = watch(now);
    moved.extend(now + Duration::from_secs(60));
    check(now + GRACE + Duration::from_secs(1));
    assert!(!moved.interrupted());
    assert_eq!(entries_for(&moved), 1);
    drop(moved);
    // A watch of a thread that has finished its call is gone before the thread can end.
    let gone = std::thread::spawn(|| {
        let w = watch(Instant::now());
        w.id
    })
    .join()
    .unwrap();
    assert!(calls().iter().all(|e| e.id != gone));
    drop(w);
}
