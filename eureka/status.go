package eureka

// Status is an instance's status as Eureka reports it.
//
// The zero value is StatusUnknown, which Eureka also uses to mean "no
// override" in the overriddenStatus field.
type Status uint8

// The instance statuses. UNKNOWN is the zero value; the reconcile hash
// lists them in the order of their names (hashOrder).
const (
	StatusUnknown Status = iota
	StatusDown
	StatusOutOfService
	StatusStarting
	StatusUp
)

// hashOrder is the statuses in alphabetical order of their names, as
// Java's TreeMap orders the reconcile hash: DOWN, OUT_OF_SERVICE, STARTING,
// UNKNOWN, UP.
var hashOrder = [...]Status{StatusDown, StatusOutOfService, StatusStarting, StatusUnknown, StatusUp}

var statusNames = [...]string{
	StatusUnknown:      "UNKNOWN",
	StatusDown:         "DOWN",
	StatusOutOfService: "OUT_OF_SERVICE",
	StatusStarting:     "STARTING",
	StatusUp:           "UP",
}

// String returns the wire name of s ("UP", "OUT_OF_SERVICE", ...).
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "UNKNOWN"
}

// LookupStatus matches an exact upper-case status name, as Eureka's strict
// enum parsing does for the "value" query parameter of the status endpoints.
func LookupStatus(name string) (Status, bool) {
	switch name {
	case "UP":
		return StatusUp, true
	case "DOWN":
		return StatusDown, true
	case "STARTING":
		return StatusStarting, true
	case "OUT_OF_SERVICE":
		return StatusOutOfService, true
	case "UNKNOWN":
		return StatusUnknown, true
	}
	return StatusUnknown, false
}

// ParseStatus is the lenient parse of the legacy JSON decoder: an exact
// upper-case name, anything else is StatusUnknown.
func ParseStatus(name string) Status {
	s, _ := LookupStatus(name)
	return s
}

// ActionType says what happened to an instance in a delta.
// The zero value means none was set and is omitted on the wire.
type ActionType uint8

// The action types of a delta.
const (
	ActionNone ActionType = iota
	ActionAdded
	ActionModified
	ActionDeleted
)

// String returns the wire name ("ADDED", "MODIFIED", "DELETED"), or "" for
// ActionNone.
func (a ActionType) String() string {
	switch a {
	case ActionAdded:
		return "ADDED"
	case ActionModified:
		return "MODIFIED"
	case ActionDeleted:
		return "DELETED"
	}
	return ""
}

// ParseActionType matches an exact action name; anything else is ActionNone.
func ParseActionType(name string) ActionType {
	switch name {
	case "ADDED":
		return ActionAdded
	case "MODIFIED":
		return ActionModified
	case "DELETED":
		return ActionDeleted
	}
	return ActionNone
}
