"""The hop into a session's tmpfs holder (``private_tmp._Holder``): what runs bwrap inside
the holder's namespaces (user, mount, and network where commands share the holder's).

It was nsenter (util-linux). nsenter is a dynamic program (libselinux, libpcre2) that
loads the locale too: starting it cost ~1 ms of every sandboxed command here (0.9-1.1 ms
over ``/bin/true``), a tenth of the whole. This is the same hop as a 359-byte static
x86-64 program (``SOURCE``, GNU as syntax; ``CODE`` is its machine code, which
``tests/core/sandbox/test_sandbox_overhead.py`` assembles again with binutils and compares):
``HOP N NS1 .. NSN PROGRAM ARGS...`` (N one digit, 1 to 8) opens the N namespace files,
all before entering any, enters them in that order (the user namespace first; credentials
kept, as ``nsenter --preserve-credentials``), and execs PROGRAM with ARGS and the
environment as they are; if any step fails it says so on stderr and exits 127. It costs
~0.1 ms.

It lives in a sealed memfd (nothing on disk, nobody can change it, this process
included) made once per process, and a child runs it as ``/proc/PID/fd/N``. Elsewhere
(another architecture, a kernel or policy that will not run a memfd: ``_Holder`` tries it
once) nsenter does the hop, as before. No other program is involved, and nothing a
sandboxed command can reach: the memfd is this process's, outside the sandbox.
"""

from __future__ import annotations

import contextlib
import os
import platform
import struct
import sys

SOURCE = """\
        .globl _start
        .text
_start:
        movq    (%rsp), %rbx            # argc
        movq    16(%rsp), %rax          # argv[1]: N, one digit from 1 to 8
        cmpq    $3, %rbx
        jl      fail
        cmpb    $0, 1(%rax)
        jne     fail
        movzbl  (%rax), %r12d
        subl    $0x31, %r12d
        cmpl    $7, %r12d
        ja      fail
        incl    %r12d
        leaq    3(%r12), %rcx           # argc >= N + 3
        cmpq    %rcx, %rbx
        jl      fail
        subq    $64, %rsp               # the N descriptors
        xorl    %r13d, %r13d
open:
        movl    $2, %eax                # open(argv[2 + i], O_RDONLY|O_CLOEXEC), each first
        movq    88(%rsp,%r13,8), %rdi
        movl    $0x80000, %esi
        xorl    %edx, %edx
        syscall
        testq   %rax, %rax
        js      fail
        movq    %rax, (%rsp,%r13,8)
        incq    %r13
        cmpq    %r12, %r13
        jl      open
        xorl    %r13d, %r13d
enter:
        movl    $308, %eax              # setns(descriptor i, 0), in order: the user first
        movq    (%rsp,%r13,8), %rdi
        xorl    %esi, %esi
        syscall
        testq   %rax, %rax
        jnz     fail
        incq    %r13
        cmpq    %r12, %r13
        jl      enter
        addq    $64, %rsp
        movq    (%rsp), %rcx            # execve(argv[2 + N], &argv[2 + N], envp)
        leaq    16(%rsp,%rcx,8), %rdx
        leaq    24(%rsp,%r12,8), %rsi
        movq    (%rsi), %rdi
        movl    $59, %eax
        syscall
fail:
        movl    $1, %eax                # write(2, message, length)
        movl    $2, %edi
        leaq    message(%rip), %rsi
        movl    $length, %edx
        syscall
        movl    $231, %eax              # exit_group(127)
        movl    $127, %edi
        syscall
message:
        .ascii  "tui-agent: cannot enter the sandbox's private /tmp\\n"
        .set    length, . - message
"""

CODE = bytes.fromhex(
    "488b1c24488b4424104883fb030f8c8500000080780100757f440fb6204183ec"
    "314183fc07777141ffc4498d4c24034839cb7c644883ec404531edb802000000"
    "4a8b7cec58be0000080031d20f054885c078454a8904ec49ffc54d39e57cdc45"
    "31edb8340100004a8b3cec31f60f054885c0752449ffc54d39e57ce64883c440"
    "488b0c24488d54cc104a8d74e418488b3eb83b0000000f05b801000000bf0200"
    "0000488d3513000000ba330000000f05b8e7000000bf7f0000000f057475692d"
    "6167656e743a2063616e6e6f7420656e746572207468652073616e64626f7827"
    "732070726976617465202f746d700a"
)

BASE = 0x400000  # where the one segment is loaded
_HEADERS = 64 + 56  # the ELF header, then one program header


def elf(code: bytes = CODE) -> bytes:
    """A static x86-64 ELF executable of ``code`` (position-independent), loaded whole
    read-only and executable at ``BASE``, starting at its first byte."""
    size = _HEADERS + len(code)
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)  # 64-bit, little-endian, SYSV
    header = struct.pack(
        "<16sHHIQQQIHHHHHH",
        ident,
        2,  # an executable
        62,  # x86-64
        1,
        BASE + _HEADERS,  # the entry point: the code
        64,  # the program header: after this one
        0,  # no section headers
        0,
        64,
        56,
        1,
        0,
        0,
        0,
    )
    segment = struct.pack("<IIQQQQQQ", 1, 5, 0, BASE, BASE, size, size, 0x1000)  # LOAD, R+X
    return header + segment + code


_MADE: list[int] = []  # the memfd (read-only descriptor), once made; [-1]: cannot be


def program() -> str | None:
    """The hop as a child of this process runs it (``/proc/PID/fd/N``), or None where it
    cannot be (not Linux on x86-64, or no memfd): nsenter then."""
    if not _MADE:
        _MADE.append(_made())
    fd = _MADE[0]
    return None if fd < 0 else f"/proc/{os.getpid()}/fd/{fd}"


def _made() -> int:
    if not sys.platform.startswith("linux") or platform.machine() not in ("x86_64", "AMD64"):
        return -1
    if sys.maxsize < 1 << 32 or not hasattr(os, "memfd_create"):
        return -1
    import fcntl

    flags = os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING
    try:
        try:
            made = os.memfd_create("tui-agent-hop", flags | 0x10)  # MFD_EXEC (Linux 6.3)
        except OSError:
            made = os.memfd_create("tui-agent-hop", flags)  # older: executable anyway
    except OSError:
        return -1
    try:
        os.write(made, elf())
        seals = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE
        fcntl.fcntl(made, fcntl.F_ADD_SEALS, seals)
        # a file open for writing cannot be executed: kept through a read-only descriptor
        return os.open(f"/proc/self/fd/{made}", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return -1
    finally:
        with contextlib.suppress(OSError):
            os.close(made)
