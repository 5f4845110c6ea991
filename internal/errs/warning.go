package errs

// Warning is advice that does not stop a command. With --json it is part of
// the command's output, as {"code": ..., "message": ...}, so stderr holds at
// most the one error object; otherwise it is a line on stderr. Code is a
// stable snake_case name a script may test; Message is for people.
type Warning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}
