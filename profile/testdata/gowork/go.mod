module gowork

go 1.21
