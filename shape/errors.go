package shape

import gw "github.com/gwlabs/gateway"

// ErrorObject is the gateway's error object, in the M, C and R
// envelopes.
type ErrorObject struct {
	Type    gw.Code `json:"type"`
	Message string  `json:"message"`
	// Code and Param are the Responses shape's (OpenAI's error.code,
	// error.param): the finer reason when there is one, else the type.
	Code       *string       `json:"code,omitempty"`
	Param      *string       `json:"param,omitempty"`
	RequestID  string        `json:"request_id"`
	IncidentID string        `json:"incident_id,omitempty"`
	Details    *ErrorDetails `json:"details,omitempty"`
}

// ErrorDetails carries gw.Error.ErrorCode.
type ErrorDetails struct {
	ErrorCode string `json:"error_code"`
}

// NewErrorObject is e as an ErrorObject.
func NewErrorObject(requestID string, e *gw.Error) ErrorObject {
	obj := ErrorObject{Type: e.Code, Message: e.Message, RequestID: requestID, IncidentID: e.IncidentID}
	if e.ErrorCode != "" {
		obj.Details = &ErrorDetails{ErrorCode: e.ErrorCode}
	}
	return obj
}
