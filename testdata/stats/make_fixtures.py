#!/usr/bin/env python3
"""Writes the byte-exact fixtures of this directory (BOM, CRLF, blank /
whitespace lines, missing final newline, invalid UTF-8, empty files).

The other `*.jsonl` cases are plain text written by hand.  Re-running this
script reproduces the files below exactly; it never touches the hand-written
ones nor any `*.expected.json`.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))

BOM = b"\xef\xbb\xbf"


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


# --- bom: UTF-8 BOM before the first `{` -----------------------------------
write(
    "bom.jsonl",
    BOM
    + b'{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"sess-bom","timestamp":"2026-05-02T09:00:00.000Z","message":{"role":"user","content":"hi"}}\n'
    + b'{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"sess-bom","timestamp":"2026-05-02T09:00:01.000Z","requestId":"req_b1","message":{"id":"msg_b1","role":"assistant","model":"claude-opus-4-7","content":[{"type":"text","text":"hello"}],"usage":{"input_tokens":4,"output_tokens":2}}}\n'
    + b'{"type":"system","subtype":"turn_duration","durationMs":1000,"uuid":"t1","parentUuid":"a1","sessionId":"sess-bom","timestamp":"2026-05-02T09:00:01.500Z"}\n',
)

# --- bom_torn: BOM + torn last line; the BOM's 3 bytes count in the offset --
# line 1 is 49 bytes, line 2 is 57 bytes, line 3 (torn) is 28 bytes:
# offset of line 3 = 3 + (49 + 1) + (57 + 1) = 111.
write(
    "bom_torn.jsonl",
    BOM
    + b'{"type":"user","uuid":"u1","sessionId":"sess-bt"}\n'
    + b'{"type":"assistant","uuid":"a1","parentUuid":"u1","x":[]}\n'
    + b'{"type":"assistant","uuid":"',
)

# --- crlf: CRLF line ends, one empty CRLF line -------------------------------
write(
    "crlf.jsonl",
    b'{"type":"permission-mode","permissionMode":"default","sessionId":"sess-crlf"}\r\n'
    + b'{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"sess-crlf","timestamp":"2026-05-02T11:00:00.000Z","message":{"role":"user","content":"hi"}}\r\n'
    + b"\r\n"
    + b'{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"sess-crlf","timestamp":"2026-05-02T11:00:01.000Z","requestId":"req_c1","message":{"id":"msg_c1","role":"assistant","model":"claude-opus-4-7","content":[{"type":"text","text":"hello"}],"usage":{"input_tokens":10,"output_tokens":20}}}\r\n'
    + b'{"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"sess-crlf","timestamp":"2026-05-02T11:00:02.000Z","message":{"role":"user","content":"thanks"}}\r\n',
)

# --- blank_lines: empty / space / tab / mixed whitespace lines ---------------
# ends with "  " and no newline: a blank tail, so NOT a torn tail.
write(
    "blank_lines.jsonl",
    b"\n"
    + b'{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"sess-blank","timestamp":"2026-05-02T12:00:00.000Z","message":{"role":"user","content":"hi"}}\n'
    + b"   \n"
    + b"\t\n"
    + b'{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"sess-blank","timestamp":"2026-05-02T12:00:01.000Z","requestId":"req_bl","message":{"id":"msg_bl","role":"assistant","content":[{"type":"text","text":"hello"}],"usage":{"input_tokens":1,"output_tokens":1}}}\n'
    + b" \t \t\n"
    + b" \t\r\n"
    + b'{"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"sess-blank","timestamp":"2026-05-02T12:00:02.000Z","message":{"role":"user","content":"bye"}}\n'
    + b"\n"
    + b"  ",
)

# --- torn_tail: blank lines before a torn last line (physical numbering) ----
# line 1 = 61 bytes, line 2 empty, line 3 = 72 bytes, line 4 = "  ",
# line 5 torn = 29 bytes: offset = 62 + 1 + 73 + 3 = 139.
write(
    "torn_tail.jsonl",
    b'{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s"}\n'
    + b"\n"
    + b'{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","n":1}\n'
    + b"  \n"
    + b'{"type":"assistant","uuid":"x',
)

# --- no_final_newline: the last line lacks "\n" but is a valid object --------
write(
    "no_final_newline.jsonl",
    b'{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"sess-nonl","timestamp":"2026-05-02T13:00:00.000Z","message":{"role":"user","content":"hi"}}\n'
    + b'{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"sess-nonl","timestamp":"2026-05-02T13:00:01.000Z","requestId":"req_nl","message":{"id":"msg_nl","role":"assistant","content":[{"type":"text","text":"hello"}],"usage":{"input_tokens":2,"output_tokens":3}}}',
)

# --- invalid_utf8: raw invalid bytes inside JSON strings ---------------------
write(
    "invalid_utf8.jsonl",
    # 0xFF inside a string -> repaired
    b'{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"sess-utf8","timestamp":"2026-05-03T07:00:00.000Z","message":{"role":"user","content":"bad \xff byte"}}\n'
    # 0xC3 (lead byte) followed by ASCII -> repaired
    + b'{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"sess-utf8","timestamp":"2026-05-03T07:00:01.000Z","requestId":"req_u8","message":{"id":"msg_u8","role":"assistant","content":[{"type":"text","text":"half \xc3 char"}],"usage":{"input_tokens":1,"output_tokens":1}}}\n'
    # proper UTF-8 (C3 A9 = e-acute) -> not repaired
    + b'{"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"sess-utf8","timestamp":"2026-05-03T07:00:02.000Z","message":{"role":"user","content":"caf\xc3\xa9"}}\n'
    # invalid bytes outside any string -> invalid line (not counted as repaired)
    + b"\xff\xfe not json\n"
    # C3 28 (bad sequence), lone continuation 0x80, 0xFF inside a key -> repaired
    + b'{"type":"user","uuid":"u3","parentUuid":"u2","sessionId":"sess-utf8","timestamp":"2026-05-03T07:00:03.000Z","k\xff":"\xc3\x28 and \x80","message":{"role":"user","content":"ok"}}\n',
)

# --- empty / only_blank -------------------------------------------------------
write("empty.jsonl", b"")
write("only_blank.jsonl", b"\n  \n\t\n\r\n \t ")
