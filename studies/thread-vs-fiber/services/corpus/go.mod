module github.com/msbench/msbench/studies/thread-vs-fiber/services/corpus

go 1.26.8
