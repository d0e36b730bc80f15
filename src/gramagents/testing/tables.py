"""Synthetic grammar-point tables of any size, for tests and benchmarks.

The sentences are placeholders (`句子 1001-3`), not Chinese: the tables exercise sizes and
structure (categories of every size, points with and without confusing instances), not
language.
"""

from __future__ import annotations

import json
import random
from pathlib import Path


def category_sizes(points: int, seed: int = 7) -> list[int]:
    """Category sizes summing to `points`: a few singletons, many small, some up to 56."""
    rng = random.Random(seed)
    sizes: list[int] = []
    left = points
    while left > 0:
        size = min(left, rng.choice([1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 56]))
        sizes.append(size)
        left -= size
    return sizes


def write_synthetic_table(
    path: Path,
    points: int = 739,
    sentences: int = 9,
    confusers_every: int = 3,
    confusers: int = 10,
    seed: int = 7,
) -> Path:
    """Write a JSONL table; every `confusers_every`-th point gets `confusers` confusing ones."""
    lines = []
    number = 1000
    for category, size in enumerate(category_sizes(points, seed)):
        for _ in range(size):
            number += 1
            point_id = str(number)
            record = {
                "id": point_id,
                "category": f"类别{category + 1}",
                "level": 1 + number % 7,
                "name": f"语法点{point_id}",
                "description": f"第{category + 1}类中的语法点{point_id}，用法说明{number % 13}。",
                "examples": [f"句子{point_id}-{k}。" for k in range(sentences)],
                "confusers": [f"干扰句{point_id}-{k}。" for k in range(confusers)]
                if (number - 1000) % confusers_every == 0
                else [],
            }
            lines.append(json.dumps(record, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
