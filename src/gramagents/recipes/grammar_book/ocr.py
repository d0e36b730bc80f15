"""Optional OCR of image-only pages: Tesseract through `pytesseract`, when both are installed.

Nothing requires it. Without it, image-only pages are listed as skipped and the build goes on
(Debian: `apt-get install tesseract-ocr` and a language pack such as `tesseract-ocr-ltz`;
then `pip install pytesseract`).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class OcrEngine:
    """Tesseract, found and working."""

    version: str
    languages: str
    """Tesseract language codes joined by `+` (e.g. `eng+ltz`)."""

    def read(self, page: Any, dpi: int) -> list[str]:
        """Paragraphs recognised on a PyMuPDF page (rendered at `dpi`)."""
        import pytesseract

        picture = page.get_pixmap(dpi=dpi)
        with tempfile.TemporaryDirectory() as scratch:
            image = Path(scratch) / "page.png"
            picture.save(str(image))
            text = pytesseract.image_to_string(str(image), lang=self.languages)
        paragraphs = []
        for chunk in text.split("\n\n"):
            joined = " ".join(line.strip() for line in chunk.splitlines() if line.strip())
            if joined:
                paragraphs.append(joined)
        return paragraphs


def find_engine(languages: str) -> tuple[OcrEngine | None, str]:
    """Tesseract with the languages asked for, or None and why it cannot be used."""
    try:
        import pytesseract
    except ImportError:
        return None, "pytesseract is not installed (pip install pytesseract)"
    try:
        version = str(pytesseract.get_tesseract_version())
        installed = set(pytesseract.get_languages(config=""))
    except Exception as exc:  # noqa: BLE001 - the binary is missing or broken
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return None, f"Tesseract is not usable ({first}; apt-get install tesseract-ocr)"
    missing = [code for code in languages.split("+") if code not in installed]
    if missing:
        return None, (
            f"Tesseract has no language data for {', '.join(missing)} "
            f"(apt-get install tesseract-ocr-{missing[0]})"
        )
    return OcrEngine(version=version, languages=languages), f"tesseract {version}"
