package triton

// CMONSettings are the metrics controller's settings, part of Config.
// (Stub: the CMON helper writes it.)
type CMONSettings struct{}
