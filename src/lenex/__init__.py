"""lenex: regenerate the results of three length-extrapolation papers."""
