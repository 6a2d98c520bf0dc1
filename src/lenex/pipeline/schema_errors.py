"""A config file that breaks its schema, said in the file's terms: the file, the key path and
the allowed range (`config/presets/tiny.yaml: train.steps: 0 (must be >= 1)`), not jsonschema's
dump of the schema pointing at the rule file that first read it."""

from __future__ import annotations

# What each JSON-schema keyword allows, said of a value.
_ALLOWED = {
    "minimum": "must be >= {}", "exclusiveMinimum": "must be > {}", "maximum": "must be <= {}",
    "exclusiveMaximum": "must be < {}", "multipleOf": "must be a multiple of {}", "enum": "must be one of {}",
    "const": "must be {}", "minItems": "must have at least {} items", "maxItems": "must have at most {} items",
    "pattern": "must match {}", "minLength": "must have at least {} characters",
}
_TYPES = {"integer": "a whole number", "number": "a number", "string": "a string", "boolean": "true or false",
          "array": "a list", "object": "a mapping", "null": "empty"}


def key_path(parts) -> str:
    """train.steps, papers.lex.multiples[2]: the path of a value inside its file."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(the whole file)"


def allowed(validator: str, value) -> str | None:
    """What a schema keyword allows, in words (None: no short form, use jsonschema's sentence)."""
    if validator == "type":
        kinds = value if isinstance(value, list) else [value]
        return "must be " + " or ".join(_TYPES.get(kind, kind) for kind in kinds)
    form = _ALLOWED.get(validator)
    return form.format(value) if form else None


def schema_message(error, source: str) -> str:
    """One line for a jsonschema ValidationError of the file `source`."""
    while error.validator in ("anyOf", "oneOf", "allOf") and error.context:
        from jsonschema.exceptions import best_match

        error = best_match(error.context)
    rule = allowed(error.validator, error.validator_value)
    where = key_path(error.absolute_path)
    if rule is None:
        return f"{source}: {where}: {error.message}"
    return f"{source}: {where}: {error.instance!r} ({rule})"
