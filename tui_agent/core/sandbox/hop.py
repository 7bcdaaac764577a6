"""The hop into a session's tmpfs holder (``private_tmp._Holder``): what runs bwrap inside
the holder's user and mount namespaces.

It was nsenter (util-linux). nsenter is a dynamic program (libselinux, libpcre2) that
loads the locale too: starting it cost ~1 ms of every sandboxed command here (0.9-1.1 ms
over ``/bin/true``), a tenth of the whole. This is the same hop as a 212-byte static
x86-64 program (``SOURCE``, GNU as syntax; ``CODE`` is its machine code, which
``tests/core/sandbox/test_sandbox_overhead.py`` assembles again with binutils and compares):
``HOP USERNS MNTNS PROGRAM ARGS...`` opens the two namespace files, enters the user
namespace then the mount namespace (credentials kept, as ``nsenter
--preserve-credentials``), and execs PROGRAM with ARGS and the environment as they are;
if any step fails it says so on stderr and exits 127. It costs ~0.1 ms.

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
        cmpq    $4, (%rsp)              # argc >= 4
        jl      fail
        movl    $2, %eax                # open(argv[1], O_RDONLY|O_CLOEXEC)
        movq    16(%rsp), %rdi
        movl    $0x80000, %esi
        xorl    %edx, %edx
        syscall
        testq   %rax, %rax
        js      fail
        movq    %rax, %r12
        movl    $2, %eax                # open(argv[2], O_RDONLY|O_CLOEXEC)
        movq    24(%rsp), %rdi
        movl    $0x80000, %esi
        xorl    %edx, %edx
        syscall
        testq   %rax, %rax
        js      fail
        movq    %rax, %r13
        movl    $308, %eax              # setns(user, CLONE_NEWUSER)
        movq    %r12, %rdi
        movl    $0x10000000, %esi
        syscall
        testq   %rax, %rax
        jnz     fail
        movl    $308, %eax              # setns(mount, CLONE_NEWNS)
        movq    %r13, %rdi
        movl    $0x20000, %esi
        syscall
        testq   %rax, %rax
        jnz     fail
        movq    (%rsp), %rcx            # execve(argv[3], &argv[3], envp)
        leaq    16(%rsp,%rcx,8), %rdx
        leaq    32(%rsp), %rsi
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
    "48833c24047c76b802000000488b7c2410be0000080031d20f054885c0785e49"
    "89c4b802000000488b7c2418be0000080031d20f054885c078434989c5b83401"
    "00004c89e7be000000100f054885c0752cb8340100004c89efbe000002000f05"
    "4885c07518488b0c24488d54cc10488d742420488b3eb83b0000000f05b80100"
    "0000bf02000000488d3513000000ba330000000f05b8e7000000bf7f0000000f"
    "057475692d6167656e743a2063616e6e6f7420656e746572207468652073616e"
    "64626f7827732070726976617465202f746d700a"
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
