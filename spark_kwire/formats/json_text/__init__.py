"""JSON text as both JSON formats (``json_schema``, ``json``) read and write it; neither imports the other, both
import this: the program tables their kernels share (``tables.py``), Spark's date-time patterns as programs
(``patterns.py``), and the kernels (``kernels/``): JSON text read (strings, escapes, numbers, RFC 3339 dates, checked
skipping) and doubles computed exactly, properties found by name, JSON written (escapes, integers, dates, base64),
doubles printed as Java prints them, and the one encoding walk both formats run."""

# the kernels (in dependency order) and the modules whose constants they compile in: listed by both JSON formats'
# codecs (formats/kernels.py loads each once)
KERNELS = tuple(f"{__name__}.kernels.{name}" for name in ("floats", "text", "write", "names", "numbers", "encode"))
CONSTANTS = (f"{__name__}.tables", f"{__name__}.patterns")
