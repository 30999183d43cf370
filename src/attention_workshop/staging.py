"""An output folder's set of files, replaced as a whole: built apart, then swapped in at once.

    with staged("out", "run") as stage:     # "out" is checked (and made) before anything else
        write_atomic(stage.path / "results.log", text)    # every file goes into the stage
    # here out/ holds the new set, complete; stage.written lists its paths

A command's set is the files it wrote last time into that folder (`run`: results.log and
the figures; `explore`: its figures; `real`: its figures and page), listed in the hidden
MANIFEST. Everything else in the folder (your own notes, another command's set) is never
touched. The steps, and what stopping at each leaves behind:

1. The folder is created if needed and proved writable; leftovers of a killed run are
   cleaned up (step 4).
2. The new files are written into out/.attention-workshop-new-XXXX/ (same file system).
   An error, Ctrl-C or SIGTERM removes it: out/ is byte for byte as it was. A SIGKILL
   leaves it behind; the next command writing to out/ removes it.
3. The commit, with Ctrl-C and SIGTERM held until it is over, under a lock on out/ (two runs
   into one folder commit one after the other). Each file the new set replaces or drops is
   checked (a folder in the way is refused) and hard-linked aside; the stage is renamed
   out/.attention-workshop-done-XXXX: the commit point. Then each new file is renamed over
   its old one, the previous set's files the new set lacks are removed, and MANIFEST is
   replaced. A rename that fails (an immutable file) puts every file back as it was.
4. A -new- folder left behind is removed; a -done- folder (a SIGKILL during step 3) is
   finished, so the folder holds the new set whole. A folder whose writer still runs is left
   alone: the writer holds a lock on it.
"""

import contextlib
import errno
import os
import shutil
import signal
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from attention_workshop import interrupts, manifest
from attention_workshop.errors import Interrupted, WorkshopError
from attention_workshop.files import OUT_TODO, cannot_write_folder

NEW, DONE = ".attention-workshop-new-", ".attention-workshop-done-"
ASIDE = ".previous"  # inside a stage being committed: hard links to the files it replaces


@dataclass
class Stage:
    folder: Path  # where the set lands, e.g. Path("out")
    path: Path  # where its files are written until the commit
    command: str  # whose set this is: "run", "explore", "real"
    committed: bool = False  # True once the new set is in place
    at: Path | None = None  # where the stage is now (renamed at the commit point)
    written: list = field(default_factory=list)  # after the commit: the new set's paths
    removed: list = field(default_factory=list)  # the previous set's paths the new one lacks
    lock: int = -1  # an open fd holding the stage's lock while this process lives

    def final(self, path):  # a path in the stage -> where it lands: stage/x.png -> folder/x.png
        return self.folder / Path(path).relative_to(self.path)


@contextlib.contextmanager
def staged(folder, command, todo=OUT_TODO):  # -> Stage
    """Stage a new set of `command`'s files for `folder`; commit it if the block succeeds.

    A failure raises one WorkshopError line (an OSError while writing into the stage names
    the file as it would have been in `folder`); an interrupt raises errors.Interrupted saying
    what `folder` holds. `todo` ends the message when `folder` cannot be written."""
    folder, created = Path(folder), not os.path.lexists(folder)
    stage = None
    try:
        with interrupts.held() as caught:  # an interrupt takes effect once the stage is locked
            try:
                folder.mkdir(parents=True, exist_ok=True)
                with _locked(folder):  # made and locked under the folder's lock: another
                    recover(folder)  # run's recover (also under it) never sees it unlocked
                    path = Path(tempfile.mkdtemp(dir=folder, prefix=NEW))
                    lock = _hold_lock(path)  # later runs keep off
            except OSError as exc:
                if os.path.lexists(folder) and not folder.is_dir():  # a file, a link to nothing
                    exc = OSError(exc.errno, "it exists and is not a folder")
                raise cannot_write_folder(folder, exc, todo) from None
            stage = Stage(folder, path, command, lock=lock)
        if caught:
            raise Interrupted(caught[0])
        try:
            yield stage
        except OSError as exc:
            raise _cannot_write(stage, exc, todo) from None
        if interrupts.seen():  # an interrupt some library swallowed still stops the commit
            raise Interrupted(interrupts.seen())
        try:
            commit(stage, todo)
        except OSError as exc:  # before the commit point (after it, commit answers itself)
            raise WorkshopError(f"cannot write to output folder '{folder}' ({exc.strerror or exc}"
                                f"); nothing in it was changed; {_todo(exc, todo)}") from None
    except BaseException as exc:
        if stage is None or stage.committed:
            raise  # nothing staged yet; or the set is in place and the message says so
        with interrupts.held():
            _discard(stage.at or stage.path)
        # an interrupt inside an import can surface as another error: interrupts.seen() knows
        if isinstance(exc, KeyboardInterrupt) or interrupts.seen():
            raise Interrupted(getattr(exc, "signum", None) or interrupts.seen() or signal.SIGINT,
                              f"'{folder}' is as it was (nothing in it changed)") from None
        raise
    finally:
        if stage is not None:
            os.close(stage.lock)
        if created:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only if empty: a failed first run leaves no folder behind


def commit(stage, todo=OUT_TODO):
    """Step 3: swap the stage's files in as `stage.command`'s set in `stage.folder`."""
    folder = stage.folder
    names = set_names(stage.path)
    with interrupts.held() as caught, _locked(folder):
        sets = manifest.read(folder)
        others = {n for command, listed in sets.items() if command != stage.command
                  for n in listed}  # a file another command's set holds too stays
        stale = [n for n in sets.get(stage.command, []) if n not in names and n not in others
                 and os.path.lexists(folder / n) and not _is_folder(folder / n)]
        _set_aside(folder, stage.path, names + stale, todo)
        manifest.write(stage.path, {**sets, stage.command: names})
        manifest.write_removals(stage.path, stale)
        done = folder / (DONE + stage.path.name[len(NEW):])
        os.rename(stage.path, done)  # the commit point: from here on the new set wins
        stage.at = done
        try:
            finish(folder, done, names, stale)
        except OSError as exc:
            _put_back(folder, done, names, stale)
            raise WorkshopError(f"cannot replace '{folder / (exc.filename or '')}' "
                                f"({exc.strerror or exc}); nothing in '{folder}' was changed; "
                                f"{todo}") from None
        _discard(done)
        stage.committed = True  # while still held: an interrupt from here on finds it set
        stage.written = [folder / n for n in names]
        stage.removed = [folder / n for n in stale]
        interrupts.note(f"'{folder}' holds the new set, complete")  # for a later interrupt
    if caught:
        raise Interrupted(caught[0], f"'{folder}' holds the new set, complete (the interrupt "
                                     "came as it was being put in place)")


def finish(folder, done, names, stale):  # rename the set in (step 3), or finish it (step 4)
    for name in names:
        if os.path.lexists(done / name):  # a resumed commit: files already moved are gone
            _rename(done / name, folder / name)
    for name in stale:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(folder / name)
    if os.path.lexists(done / manifest.NAME):
        _rename(done / manifest.NAME, folder / manifest.NAME)


def set_names(stage):  # the files of a set in a stage: its own hidden files are not
    return sorted(p.name for p in Path(stage).iterdir()
                  if p.is_file() and not p.name.startswith("."))


def recover(folder):  # step 4, under the folder's lock
    """Remove or finish what a killed run left in `folder`; skip stages whose writer lives."""
    if _flock is None:
        return  # no locks here (Windows): a live run's stage cannot be told from a dead one's
    for entry in os.scandir(folder):
        if not entry.name.startswith((NEW, DONE)) or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            lock = _hold_lock(entry.path, wait=False)
        except BlockingIOError:
            continue  # its writer still runs
        try:
            if entry.name.startswith(DONE):
                done = Path(entry.path)
                finish(folder, done, set_names(done), manifest.read_removals(done))
            _discard(entry.path)
        finally:
            os.close(lock)


def _set_aside(folder, stage, names, todo):
    """Hard-link each file the set replaces into stage/ASIDE (copy where links fail), so a
    failed rename can put it back; a folder in the way is refused before anything changes."""
    aside = stage / ASIDE
    aside.mkdir()
    for name in names:
        target = folder / name
        if not os.path.lexists(target):
            continue
        if _is_folder(target):
            raise WorkshopError(f"cannot write '{target}': a folder of that name is in the way; "
                                f"move it, or {todo}")
        try:
            os.link(target, aside / name, follow_symlinks=False)
        except OSError:  # no hard links here (or not allowed): keep a copy instead
            try:
                shutil.copy2(target, aside / name, follow_symlinks=False)
            except OSError as exc:
                raise WorkshopError(f"cannot set '{target}' aside before replacing it "
                                    f"({exc.strerror or exc}); nothing in '{folder}' was "
                                    f"changed; {todo}") from None


def _put_back(folder, done, names, stale):  # a rename failed in step 3: undo every step done
    aside = done / ASIDE
    for name in [*names, *stale]:
        if os.path.lexists(aside / name):
            with contextlib.suppress(OSError):
                os.replace(aside / name, folder / name)
        elif not os.path.lexists(done / name):  # a new file that was moved in: take it out
            with contextlib.suppress(OSError):
                os.unlink(folder / name)


def _rename(src, dst):  # os.replace, with the error naming dst's name (the file the user sees)
    try:
        os.replace(src, dst)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, Path(dst).name) from None


def _cannot_write(stage, exc, todo):  # an OSError while writing into the stage -> one line
    try:
        name = stage.folder / Path(exc.filename).relative_to(stage.path)
    except (TypeError, ValueError):  # not a file of the stage: not ours to explain
        raise exc from None
    return WorkshopError(f"cannot write '{name}' ({exc.strerror or exc}); nothing in "
                         f"'{stage.folder}' was changed; {_todo(exc, todo)}")


def _todo(exc, todo):  # what to do after an OSError: a full disk says so first
    return f"free some space, or {todo}" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else todo


def _is_folder(path):  # a real folder, not a link to one
    return path.is_dir() and not path.is_symlink()


def _discard(path):
    shutil.rmtree(path, ignore_errors=True)


try:
    from fcntl import LOCK_EX, LOCK_NB
    from fcntl import flock as _flock
except ImportError:  # Windows
    _flock = None


def _hold_lock(path, wait=True):  # -> an open fd holding an exclusive lock on folder `path`
    fd = os.open(path, os.O_RDONLY)
    if _flock is not None:
        try:
            _flock(fd, LOCK_EX if wait else LOCK_EX | LOCK_NB)
        except BaseException:
            os.close(fd)
            raise
    return fd


@contextlib.contextmanager
def _locked(folder):
    fd = _hold_lock(folder)
    try:
        yield
    finally:
        os.close(fd)
