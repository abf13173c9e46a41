//! Running skein on a pseudo-terminal, for what it does only on a terminal (tables fitted to
//! the width, colour, human summaries, progress bars).

use std::fs::File;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

/// What a run on a terminal printed (stdout and stderr interleaved, as a terminal shows them)
/// and how it ended.
pub(crate) struct PtyRun {
    pub(crate) status: Option<i32>,
    pub(crate) text: String,
}

/// A new pseudo-terminal `cols` wide: (master, slave).
#[allow(unsafe_code, reason = "openpty has no safe wrapper in std")]
fn open(cols: u16) -> (File, OwnedFd) {
    let mut master: libc::c_int = -1;
    let mut slave: libc::c_int = -1;
    let size = libc::winsize {
        ws_row: 50,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: the out-pointers are valid; a null name and termios are allowed.
    let rc = unsafe {
        libc::openpty(
            &raw mut master,
            &raw mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &raw const size,
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: openpty returned two new descriptors that nothing else owns.
    unsafe { (File::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

/// Runs `cmd` with its stdin, stdout and (unless `stderr_piped`) stderr on a terminal `cols`
/// wide. With `stderr_piped`, stderr is captured apart and appended after a `--- stderr ---`
/// line.
pub(crate) fn run(mut cmd: Command, cols: u16, stderr_piped: bool) -> PtyRun {
    let (mut master, slave) = open(cols);
    let term = |fd: &OwnedFd| Stdio::from(fd.try_clone().expect("dup pty"));
    cmd.stdin(term(&slave)).stdout(term(&slave));
    if stderr_piped {
        cmd.stderr(Stdio::piped());
    } else {
        cmd.stderr(term(&slave));
    }
    if !cmd.get_envs().any(|(k, _)| k == "TERM") {
        cmd.env("TERM", "xterm-256color");
    }
    let mut child = cmd.spawn().expect("spawn skein on a pty");
    // Only the child may hold the terminal now, so that reading ends when it exits.
    drop(cmd);
    drop(slave);
    let mut err_pipe = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            match master.read(&mut buf) {
                Ok(0) | Err(_) => break, // EIO once the last holder of the terminal exits
                Ok(n) => bytes.extend_from_slice(&buf[..n]),
            }
        }
        bytes
    });
    let mut err = String::new();
    if let Some(e) = err_pipe.as_mut() {
        e.read_to_string(&mut err).expect("read stderr");
    }
    let status = child.wait().expect("wait").code();
    let bytes = reader.join().expect("pty reader");
    let mut text = String::from_utf8_lossy(&bytes).replace("\r\n", "\n");
    if stderr_piped {
        text.push_str("--- stderr ---\n");
        text.push_str(&err);
    }
    PtyRun { status, text }
}

/// `text` without ANSI colour codes.
pub(crate) fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
