"""Pixels to observations: frames from a source, decoded, markers detected, the table pose
solved, models located in inches and tracked; one :class:`~tablesight.vision.observe.Observation`
a frame. Also the doctor's look at a picture of the set-up."""
