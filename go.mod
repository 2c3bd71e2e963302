module github.com/srqconform/srqconform

go 1.26

require (
	github.com/leanovate/gopter v0.2.11
	github.com/stretchr/testify v1.12.1
	go.yaml.in/yaml/v3 v3.0.5
	pgregory.net/rapid v1.3.0
)

require github.com/anishathalye/porcupine v1.3.1
