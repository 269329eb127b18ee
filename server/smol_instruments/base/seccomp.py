"""A seccomp filter for contained commands: no Unix-domain sockets, no io_uring.

A read-only filesystem does not stop `connect()` to a socket file: the Docker socket, a
session bus or an SSH agent is reachable through any directory the sandbox can see, and a
Docker socket is root on the host. This filter makes `socket(AF_UNIX, ...)` fail with EPERM
(`socketpair`, which only connects a process to itself, stays allowed), refuses
`io_uring_setup` (io_uring can open sockets without the `socket` system call), and refuses
every system call made through a foreign ABI (32-bit or x32 on x86-64), which would
otherwise take other system call numbers. Bubblewrap loads it with `--seccomp FD`.

The program is classic BPF written out here: it is ten instructions, and the alternative,
libseccomp, is a C library that is not on PyPI.
"""

from __future__ import annotations

import os
import platform
import struct

# linux/filter.h and linux/seccomp.h
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_EPERM = 0x00050000 | 1  # SECCOMP_RET_ERRNO | EPERM

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
_NR, _ARCH, _ARG0 = 0, 4, 16  # args[0]'s low 32 bits (both architectures are little-endian)

_AF_UNIX = 1
_X32_SYSCALL_BIT = 0x40000000

#: machine -> (AUDIT_ARCH_*, __NR_socket, __NR_io_uring_setup)
_ARCHES = {
    "x86_64": (0xC000003E, 41, 425),
    "aarch64": (0xC00000B7, 198, 425),
}


def supported() -> bool:
    return platform.machine() in _ARCHES


def unix_socket_filter(machine: str | None = None) -> bytes:
    """The filter as bubblewrap reads it: an array of `struct sock_filter`."""
    arch, socket_nr, io_uring_nr = _ARCHES[machine or platform.machine()]
    # (code, jump-if-true label, jump-if-false label, k); labels resolve to relative offsets.
    program: list[tuple[int, str | None, str | None, int]] = [
        (_LD_W_ABS, None, None, _ARCH),
        (_JEQ_K, None, "deny", arch),
        (_LD_W_ABS, None, None, _NR),
        (_JGE_K, "deny", None, _X32_SYSCALL_BIT),
        (_JEQ_K, "deny", None, io_uring_nr),
        (_JEQ_K, None, "allow", socket_nr),
        (_LD_W_ABS, None, None, _ARG0),
        (_JEQ_K, "deny", "allow", _AF_UNIX),
    ]
    labels = {"allow": len(program), "deny": len(program) + 1}
    program += [(_RET_K, None, None, _ALLOW), (_RET_K, None, None, _EPERM)]

    def offset(index: int, label: str | None) -> int:
        return 0 if label is None else labels[label] - index - 1

    return b"".join(
        struct.pack("=HBBI", code, offset(i, jt), offset(i, jf), k)
        for i, (code, jt, jf, k) in enumerate(program)
    )


def filter_fd() -> int | None:
    """A fresh in-memory file holding the filter (bubblewrap reads it to the end once)."""
    if not supported():
        return None
    fd = os.memfd_create("smol-instruments-seccomp", 0)
    os.write(fd, unix_socket_filter())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
