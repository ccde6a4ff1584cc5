module github.com/msbench/msbench/services/thread-vs-fiber/corpus

go 1.26.8
