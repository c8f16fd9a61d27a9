"""The dating room: the ``stoicheia_dater`` and ``stoicheia_attributor`` components, the date and
genre/dialect models they run, their readings of a text, their results (:mod:`.results`) and the HTML rendering of them."""
