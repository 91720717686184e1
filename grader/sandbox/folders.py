"""Walks of a folder a student's code may have filled (the scratch, a zygote's folder): no
recursion however deep the folders go, and no path that grows with the depth (a chain of 3,000
folders is past Python's recursion limit, and its paths past PATH_MAX), so one folder is open at a
time, entered by name from its parent and left through its ``..``. Used on both sides: the
grader measures a scratch folder while its worker runs (``allocated_bytes``) and removes a
zygote's folder after it (``remove``); the zygote empties the scratch between two workers
(``empty``: this file is copied beside zygote_server.py, which imports it by this name). The standard
library only."""

import os
import stat

FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
CAP = 2_000_000  # folders entered in one walk at most: a walk always ends, even of a tree that grows under it


def _entries(fd: int, visit) -> list[str]:
    """``visit(fd, name, lstat)`` for each entry of the open folder ``fd``; its sub-folders' names."""
    folders = []
    try:
        with os.scandir(fd) as listing:
            for entry in listing:
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                visit(fd, entry.name, info)
                if stat.S_ISDIR(info.st_mode):
                    folders.append(entry.name)
    except OSError:
        pass
    return folders


def walk(top, visit, leave=None) -> None:
    """Depth first below the folder ``top`` (itself not visited): ``visit(fd, name, lstat)`` for each
    entry, in the open folder ``fd`` that holds it; ``leave(fd, name)`` once a sub-folder's entries
    are all done, ``fd`` its parent. Symlinks are never followed. Where a folder's ``..`` is not
    the folder the walk came from (the tree was moved under it) the walk stops there."""
    try:
        fd = os.open(top, FLAGS)
    except OSError:
        return
    try:
        here = os.fstat(fd)
        stack = [((here.st_dev, here.st_ino), "", _entries(fd, visit))]
        entered = 0
        while stack:
            _, _, todo = stack[-1]
            if todo and entered < CAP:
                name = todo.pop()
                try:
                    child = os.open(name, FLAGS, dir_fd=fd)
                except OSError:
                    continue
                entered += 1
                os.close(fd)
                fd = child
                here = os.fstat(fd)
                stack.append(((here.st_dev, here.st_ino), name, _entries(fd, visit)))
                continue
            _, name, _ = stack.pop()
            if not stack:
                break
            up = os.open("..", FLAGS, dir_fd=fd)
            os.close(fd)
            fd = up
            there = os.fstat(fd)
            if (there.st_dev, there.st_ino) != stack[-1][0]:
                break
            if leave is not None:
                leave(fd, name)
    finally:
        os.close(fd)


def allocated_bytes(top) -> int:
    """Bytes allocated below ``top`` (blocks: a sparse file counts what it holds; folders count too)."""
    total = 0

    def visit(fd, name, info):
        nonlocal total
        total += info.st_blocks * 512

    walk(top, visit)
    return total


def empty(top) -> None:
    """Remove everything below the folder ``top``, keeping ``top``; what cannot be removed stays."""
    def visit(fd, name, info):
        if not stat.S_ISDIR(info.st_mode):
            try:
                os.unlink(name, dir_fd=fd)
            except OSError:
                pass

    def leave(fd, name):
        try:
            os.rmdir(name, dir_fd=fd)
        except OSError:
            pass

    walk(top, visit, leave)


def remove(top) -> None:
    """Remove the folder ``top`` and everything below it (shutil.rmtree's ``ignore_errors``, without
    its recursion); a symlink or a file at ``top`` is unlinked."""
    try:
        if not os.path.isdir(top) or os.path.islink(top):
            os.unlink(top)
            return
    except OSError:
        return
    empty(top)
    try:
        os.rmdir(top)
    except OSError:
        pass
