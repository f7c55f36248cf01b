"""What every payload format provides and shares, format-neutral: the loop a decoder runs its kernel in
(``decoding.py``), the base of the framed encoders and their loop (``encoding.py``), and what decoders and encoders
return, with the FAILFAST / PERMISSIVE modes (``results.py``)."""
