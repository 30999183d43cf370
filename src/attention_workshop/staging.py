"""An output folder's set of files, replaced as a whole: built apart, then swapped in at once.

    with staged("out", "run") as stage:     # "out" is checked (and made) before anything else
        write_atomic(stage.path / "results.log", text)    # every file goes into the stage
    # here out/ holds the new set, complete; stage.written lists its paths

A command's set is the files it wrote last time into that folder (`run`: results.log and
the figures; `explore`: its figures; `real`: its figures and page), listed in the hidden
MANIFEST with each file's size and SHA-256. Everything else in the folder (your own notes,
another command's set, a file of the set you have since changed) is never removed, nor
replaced by a file of the new set (`check_replaceable`: refused in one line); nothing is
taken for ours by its name alone: a stage is ours only if it holds MARK, naming it.
The steps, and what stopping at each leaves behind:

1. The folder is created if needed (with its missing parents, removed again if the run
   fails) and proved writable; leftovers of a killed run are cleaned up (step 4).
2. The new files are written into out/.attention-workshop-new-XXXX/ (same file system).
   An error, Ctrl-C or SIGTERM removes it: out/ is byte for byte as it was. A SIGKILL
   leaves it behind; the next command writing to out/ removes it.
3. The commit, with Ctrl-C and SIGTERM held until it is over, under a lock on out/ (two runs
   into one folder commit one after the other). Each file the new set replaces or drops is
   checked (a folder in the way is refused) and hard-linked aside; the stage is renamed
   out/.attention-workshop-done-XXXX: the commit point. Then each new file is renamed over
   its old one, the previous set's files the new set lacks are removed, and MANIFEST is
   replaced. A rename that fails (an immutable file) puts every file back as it was; if
   putting back fails too, the stage stays, the message says which files are new or
   missing, and the next command writing to out/ completes the new set (step 4).
4. A -new- folder left behind is removed; a -done- folder (a SIGKILL during step 3) is
   finished, so the folder holds the new set whole. A folder whose writer still runs is left
   alone: the writer holds a lock on it.
"""

import contextlib
import errno
import os
import shutil
import signal
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from attention_workshop import interrupts, manifest
from attention_workshop.errors import Interrupted, WorkshopError
from attention_workshop.reading import printable
from attention_workshop.writing import OUT_TODO, cannot_write_folder

NEW, DONE = ".attention-workshop-new-", ".attention-workshop-done-"
ASIDE = ".previous"  # inside a stage being committed: hard links to the files it replaces
MARK = ".attention-workshop-stage"  # inside each stage: its own name's tail, "XXXX\n"


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
    kept: bool = False  # a failed commit could not put back every file: left for recover

    def final(self, path):  # a path in the stage -> where it lands: stage/x.png -> folder/x.png
        return self.folder / Path(path).relative_to(self.path)


@contextlib.contextmanager
def staged(folder, command, todo=OUT_TODO, expect=()):  # -> Stage
    """Stage a new set of `command`'s files for `folder`; commit it if the block succeeds.

    A failure raises one WorkshopError line (an OSError while writing into the stage names
    the file as it would have been in `folder`); an interrupt raises errors.Interrupted saying
    what `folder` holds. `todo` ends the message when `folder` cannot be written. `expect`:
    names the set will hold, checked before the block runs (a file of that name that we did
    not write is refused now, not after the work: `check_replaceable`)."""
    if str(folder) == "":
        raise WorkshopError("--out '' names no folder; give one, e.g. --out workshop-output")
    folder = Path(folder)
    created = _missing(folder)  # the folder and its parents this run makes, deepest first
    stage = None
    try:
        with interrupts.held() as caught:  # an interrupt takes effect once the stage is locked
            try:
                folder.mkdir(parents=True, exist_ok=True)
                with _locked(folder):  # made and locked under the folder's lock: another
                    recover(folder)  # run's recover (also under it) never sees it unlocked
                    check_replaceable(folder, expect, manifest.read(folder), todo)
                    path, lock = _new_stage(folder)
            except OSError as exc:
                if os.path.lexists(folder) and not folder.is_dir():  # a file, a link to nothing
                    exc = OSError(exc.errno, "it exists and is not a folder")
                raise cannot_write_folder(folder, exc, todo) from None
            except ValueError:  # a NUL byte in the name (only the API can pass one)
                raise cannot_write_folder(folder, OSError(errno.EINVAL, "the name holds a NUL "
                                                          "byte"), todo) from None
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
        if stage is None or stage.committed or stage.kept:
            raise  # nothing staged yet; or the set is in place (or left) and the message says so
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
        for made in created:
            try:
                made.rmdir()  # only if empty: a failed first run leaves no folder behind
            except (OSError, ValueError):  # ValueError: a NUL byte, never made
                break


def _new_stage(folder):  # -> (its path, the fd holding its lock); nothing left on a failure
    """A full disk can let the folder be made and fail its MARK (an empty file): the stage is
    removed again before the error goes on."""
    path = Path(tempfile.mkdtemp(dir=folder, prefix=NEW))
    lock = -1
    try:
        lock = _hold_lock(path)  # later runs keep off
        (path / MARK).write_text(path.name[len(NEW):] + "\n")
    except BaseException:
        if lock >= 0:
            os.close(lock)
        _discard(path)
        raise
    return path, lock


def check_replaceable(folder, names, sets, todo=OUT_TODO):  # sets: manifest.read(folder)
    """Each of `names` in `folder` is absent, or a file a command's set holds as it was
    written (manifest.ours): a folder, or a file or link we did not write (a learner's own
    generation.html), is refused in one line naming it, before anything changes."""
    for name in names:
        target = folder / name
        if not os.path.lexists(target) or manifest.ours(target, sets):
            continue
        if _is_folder(target):
            raise WorkshopError(f"cannot write '{printable(target)}': a folder of that name is "
                                f"in the way; move it, or {todo}")
        what = "a link" if os.path.islink(target) else "a file"
        raise WorkshopError(f"cannot write '{printable(target)}': {what} of that name is there "
                            "that attention-workshop did not write (or it changed since), and "
                            f"it is never replaced; move or rename it, or {todo}")


def commit(stage, todo=OUT_TODO):
    """Step 3: swap the stage's files in as `stage.command`'s set in `stage.folder`."""
    folder = stage.folder
    names = set_names(stage.path)
    written = {n: manifest.fingerprint(stage.path / n) for n in names}
    with interrupts.held() as caught, _locked(folder):
        sets = manifest.read(folder)
        others = {n for command, listed in sets.items() if command != stage.command
                  for n in listed}  # a file another command's set holds too stays
        stale = {n: fp for n, fp in sets.get(stage.command, {}).items() if n not in names
                 and n not in others and manifest.matches(folder / n, fp)}  # ours, unchanged
        check_replaceable(folder, names, sets, todo)  # again, under the lock: the last word
        _set_aside(folder, stage.path, names + list(stale), todo)
        manifest.write(stage.path, {**sets, stage.command: written})
        manifest.write_removals(stage.path, stale)
        done = folder / (DONE + stage.path.name[len(NEW):])
        os.rename(stage.path, done)  # the commit point: from here on the new set wins
        stage.at = done
        try:
            finish(folder, done, names, stale)
        except OSError as exc:
            failed = f"cannot replace '{folder / (exc.filename or '')}' ({exc.strerror or exc})"
            left = _put_back(folder, done, names, stale)
            if left:
                stage.kept = True  # the next run's recover finishes it
                raise WorkshopError(f"{failed}, and putting the previous files back failed "
                                    f"too: in '{folder}', {left}, the rest is as it was; the "
                                    f"next command writing to '{folder}' completes the new "
                                    f"set; {todo}") from None
            raise WorkshopError(f"{failed}; nothing in '{folder}' was changed; {todo}") from None
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
    for name, recorded in stale.items():  # {name: fingerprint}: only what was written
        if manifest.matches(folder / name, recorded):
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
        kind = _stage_kind(entry)
        if kind is None:
            continue  # a user's own folder or file, whatever its name
        try:
            lock = _hold_lock(entry.path, wait=False)
        except BlockingIOError:
            continue  # its writer still runs
        try:
            if kind == "begun":  # killed before its MARK was whole: nothing else in it
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(entry.path, MARK))
                with contextlib.suppress(OSError):
                    os.rmdir(entry.path)  # only if empty: nothing of anyone's is lost
            elif entry.name.startswith(DONE):
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
    """Each new file moved in goes back into the stage, each previous one back in place.
    Returns "" when all are back, else what differs, e.g. "a.png is the new set's, b.png is
    missing": the stage still holds every new file not in place, so `finish` can complete it."""
    aside = done / ASIDE
    for name in [*names, *stale]:
        with contextlib.suppress(OSError):  # a failed move back keeps the previous file aside
            if name in names and not os.path.lexists(done / name):  # moved in: move it back
                os.replace(folder / name, done / name)
            if os.path.lexists(aside / name):
                os.replace(aside / name, folder / name)
    new = [n for n in names if not os.path.lexists(done / n) and os.path.lexists(folder / n)]
    missing = [n for n in [*names, *stale]
               if os.path.lexists(aside / n) and not os.path.lexists(folder / n)]
    return "; ".join(f"{', '.join(printable(n) for n in group)} {verb}" for group, verb in
                     ((new, "now the new set's"), (missing, "missing")) if group)


def _stage_kind(entry):  # a DirEntry -> "ours", "begun" or None (not a stage of ours)
    """Example: .attention-workshop-new-k2x9 holding MARK "k2x9" -> "ours"; a learner's own
    .attention-workshop-new-mine folder holding anything else -> None; one holding nothing
    but the start of its MARK (a run killed as it made its stage) -> "begun"."""
    prefix = next((p for p in (NEW, DONE) if entry.name.startswith(p)), None)
    if prefix is None or not entry.is_dir(follow_symlinks=False):
        return None
    expected = entry.name[len(prefix):] + "\n"
    try:
        inside = os.listdir(entry.path)
        if not inside:
            return "begun"
        mark = os.lstat(os.path.join(entry.path, MARK))
        if not stat.S_ISREG(mark.st_mode) or mark.st_size > len(expected.encode()):
            return None
        with open(os.path.join(entry.path, MARK), encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    if text == expected:
        return "ours"
    return "begun" if inside == [MARK] and expected.startswith(text) else None


def _missing(folder):  # -> [folder, its parent, ...]: those that do not exist, deepest first
    made = []
    while not os.path.lexists(folder) and folder != folder.parent:
        made.append(folder)
        folder = folder.parent
    return made


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
