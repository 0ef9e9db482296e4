"""A file's form, which the merge does not read but must give back: a UTF-8 BOM, its line endings.

The merge reads LF text without a BOM; `FileForm.of` takes the original apart into that, and
`restore` puts the form back on the merged file (and on every reading): a CRLF file stays CRLF, new
lines included; a file mixing endings keeps each unchanged line's own (a changed line, the one of
the line it replaces) and gives a new line the ending of the line before it. Whether the file ends with a newline is the merge's business (it
keeps the original's). A lone `\r` (not before `\n`) is content, never a line ending.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapply.merge.diff import line_pairs

BOM = "\ufeff"


@dataclass(frozen=True)
class FileForm:
    bom: bool = False
    newline: str = "\n"  # the ending of new lines: the file's own, or the most common one
    # per line of the LF original (one per "\n" in it), only when the file mixes CRLF and LF
    endings: tuple[str, ...] | None = None

    @staticmethod
    def of(text: str) -> tuple[FileForm, str]:
        """The form of `text` and the text as the merge reads it (LF, no BOM)."""
        bom = text.startswith(BOM)
        if bom:
            text = text[1:]
        crlf = text.count("\r\n")
        if not crlf:
            return FileForm(bom), text
        lf = text.count("\n") - crlf
        newline = "\r\n" if crlf >= lf else "\n"
        if not lf:
            return FileForm(bom, "\r\n"), text.replace("\r\n", "\n")
        endings = tuple("\r\n" if line.endswith("\r\n") else "\n" for line in text.splitlines(keepends=True)
                        if line.endswith("\n"))
        return FileForm(bom, newline, endings), text.replace("\r\n", "\n")

    @property
    def plain(self) -> bool:
        return not self.bom and self.newline == "\n" and self.endings is None

    def restore(self, merged: str, original: str) -> str:
        """`merged` (LF, as the merge wrote it from `original`, the LF text `of` gave) in this form."""
        if self.endings is not None:
            merged = _mixed(merged, original, self.endings, self.newline)
        elif self.newline != "\n":
            merged = merged.replace("\n", self.newline)
        return BOM + merged if self.bom else merged

    def describe(self) -> list[str]:
        """What `of` took apart, said for a finding."""
        said = ["kept the file's UTF-8 byte order mark"] if self.bom else []
        if self.endings is not None:
            said.append("kept each line's own ending (the file mixes CRLF and LF; new lines follow the line before)")
        elif self.newline == "\r\n":
            said.append("kept the file's CRLF line endings, new lines included")
        return said


def _mixed(merged: str, original: str, endings: tuple[str, ...], default: str) -> str:
    """Each merged line that is an unchanged original line gets that line's ending; a new line gets
    the ending of the line before it (the file's most common one at the top)."""
    old = original.split("\n")
    new = merged.split("\n")
    given: list[str | None] = [None] * (len(new) - 1)  # the lines that end with "\n"
    # an unchanged line, or a changed one in its old line's place
    for i, j in line_pairs(old[:-1], new[:-1], replaced=True).items():
        given[j] = endings[i]
    out, last = [], default
    for line, ending in zip(new, given):
        last = ending or last
        out.append(line + last)
    out.append(new[-1])
    return "".join(out)
