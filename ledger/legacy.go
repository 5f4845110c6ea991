package ledger

// legacyEntry reads, beside Common, the fields that said an entry's facts
// before Flags existed. Verdicts and calibrations recorded then carry them
// and no flags; their flags are derived from these fields (never from the
// summary) when the entry is read, so the index row and every view see one
// set of flags whatever hone wrote the entry.
type legacyEntry struct {
	Common
	PinUnprotected bool `toml:"pin_unprotected"`
	Environment    struct {
		Isolation string `toml:"isolation"`
	} `toml:"environment"`
}

// deriveFlags adds the flags the old fields imply. A new entry sets the
// same flags from the same facts, so deriving again changes nothing.
func (e *legacyEntry) deriveFlags() {
	if e.Kind != KindVerdict && e.Kind != KindCalibration {
		return
	}
	if e.PinUnprotected {
		e.AddFlag(FlagUnprotectedPin)
	}
	if iso := e.Environment.Isolation; iso != "" && iso != "full" {
		e.AddFlag(FlagWeak)
	}
}
