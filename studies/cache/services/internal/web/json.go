package web

import (
	"encoding/json"
	"log"
	"net/http"
)

// JSON answers status with v encoded as JSON. It encodes before sending the
// header, so encoding counts in a handler's Server-Timing and a value that
// cannot be encoded is answered 500, not cut short.
func JSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		log.Printf("encode answer: %v", err)
		status, body = http.StatusInternalServerError, []byte(`{"error":"the answer could not be encoded"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body) // a client that went away is no error of the service
}

// Error answers status with {"error": reason}, the one shape of every
// failure both programs report.
func Error(w http.ResponseWriter, status int, reason string) {
	JSON(w, status, map[string]string{"error": reason})
}
