// Package api holds the messages the gateway and the services exchange over
// go-micro's RPC (JSON codec), and the names they are registered under.
package api

// Service names in the registry.
const (
	HelloService        = "hello"
	UniversitiesService = "universities"
)

// HelloRequest asks Hello.Say for the greeting.
type HelloRequest struct{}

// HelloResponse carries it.
type HelloResponse struct {
	Message string `json:"message"`
}

// FindRequest asks Universities.Find for one country's universities.
type FindRequest struct {
	Country string `json:"country"`
}

// FindResponse carries them in the dataset's order.
type FindResponse struct {
	Universities []University `json:"universities"`
}

// University is one record of the dataset, with its field names.
type University struct {
	WebPages      []string `json:"web_pages"`
	Name          string   `json:"name"`
	AlphaTwoCode  string   `json:"alpha_two_code"`
	StateProvince *string  `json:"state-province"`
	Domains       []string `json:"domains"`
	Country       string   `json:"country"`
}
