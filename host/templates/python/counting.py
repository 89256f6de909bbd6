"""The logic of {{name}}, plain Python with no component imports, so it tests natively."""


def count(data: bytes) -> tuple[int, int, int]:
    """Lines (newline characters, plus a last line without one), words and bytes."""
    lines = data.count(b"\n")
    if data and not data.endswith(b"\n"):
        lines += 1
    return lines, len(data.split()), len(data)
