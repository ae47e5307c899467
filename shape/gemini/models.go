package gemini

import (
	"encoding/base64"
	"strconv"
)

// Model is one entry of GET /v1beta/models in Google's shape: name is
// "models/" + the gateway's prefixed id.
type Model struct {
	Name                       string   `json:"name"`
	BaseModelID                string   `json:"baseModelId,omitempty"`
	Version                    string   `json:"version"`
	DisplayName                string   `json:"displayName"`
	InputTokenLimit            int64    `json:"inputTokenLimit,omitempty"`
	OutputTokenLimit           int64    `json:"outputTokenLimit,omitempty"`
	SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
}

// ModelList is one page of the list.
type ModelList struct {
	Models        []Model `json:"models"`
	NextPageToken string  `json:"nextPageToken,omitempty"`
}

// NewModel describes a model by its prefixed id.
func NewModel(id string, contextWindow, maxOutput int64) Model {
	return Model{Name: "models/" + id, BaseModelID: id, Version: "001", DisplayName: id, InputTokenLimit: contextWindow, OutputTokenLimit: maxOutput,
		SupportedGenerationMethods: []string{MethodGenerate, MethodStream, MethodCountTokens}}
}

// DefaultPageSize and MaxPageSize are Google's for models.list.
const (
	DefaultPageSize = 50
	MaxPageSize     = 1000
)

// Page returns the page of ms (sorted by name) that pageToken and
// pageSize ask for. pageToken is the opaque token of an earlier page
// (the offset, encoded); a token that does not decode is reported by ok
// false.
func Page(ms []Model, pageSize int, pageToken string) (out ModelList, ok bool) {
	if pageSize <= 0 {
		pageSize = DefaultPageSize
	}
	pageSize = min(pageSize, MaxPageSize)
	start := 0
	if pageToken != "" {
		b, err := base64.RawURLEncoding.DecodeString(pageToken)
		if err != nil {
			return ModelList{}, false
		}
		n, err := strconv.Atoi(string(b))
		if err != nil || n < 0 || n > len(ms) {
			return ModelList{}, false
		}
		start = n
	}
	end := min(len(ms), start+pageSize)
	out.Models = append([]Model{}, ms[start:end]...)
	if end < len(ms) {
		out.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(end)))
	}
	return out, true
}
