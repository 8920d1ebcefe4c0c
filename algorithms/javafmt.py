"""Number formatting exactly as the reference implementation prints models, so that
printed models can be compared line for line."""

import math
from decimal import Decimal


def java_double(d):
    """The text Java's ``Double.toString`` gives for ``d``."""
    if math.isnan(d):
        return "NaN"
    if math.isinf(d):
        return "Infinity" if d > 0 else "-Infinity"
    if d == 0:
        return "-0.0" if math.copysign(1, d) < 0 else "0.0"
    if 1e-3 <= abs(d) < 1e7:
        s = repr(float(d))
        return s if "." in s else s + ".0"
    sign, digits, exp = Decimal(repr(float(d))).as_tuple()
    digits = "".join(map(str, digits))
    exponent = exp + len(digits) - 1
    digits = digits.rstrip("0") or "0"
    mantissa = digits[0] + "." + (digits[1:] or "0")
    return ("-" if sign else "") + mantissa + "E" + str(exponent)


def round_double(value, places):
    """``Math.round(value * 10^places) / 10^places``; like Java's, the rounding
    saturates at a long's range (and gives 0 for NaN) rather than failing."""
    scale = 10.0 ** places
    t = value * scale + 0.5
    if math.isnan(t):
        return 0.0
    r = math.floor(t) if math.isfinite(t) else math.copysign(2**63, t)
    return min(max(r, -2**63), 2**63 - 1) / scale


def double_to_string(value, places):
    """Fixed-point text with at most ``places`` decimals, trailing zeros dropped."""
    temp = value * 10.0 ** places
    if abs(temp) >= 9.223372036854776e18:
        return java_double(value)
    p = int(temp + 0.5) if temp > 0 else -int(abs(temp) + 0.5)
    s = list(str(p))
    if places == 0:
        return "".join(s)
    dot = len(s) - places
    while (p < 0 and dot < 1) or dot < 0:
        s.insert(1 if p < 0 else 0, "0")
        dot += 1
    s.insert(dot, ".")
    if p < 0 and s[1] == ".":
        s.insert(1, "0")
    elif s[0] == ".":
        s.insert(0, "0")
    text = "".join(s)
    if "." in text:
        head, tail = text.split(".")
        tail = tail.rstrip("0")
        text = head + ("." + tail if tail else "")
    return text


def counts(value):
    """A weight as printed in a tree, e.g. ``14.0`` or ``3.38``."""
    return java_double(round_double(value, 2))
