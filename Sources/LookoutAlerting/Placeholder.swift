// LookoutAlerting
