module github.com/wendflow/wend/temporal

go 1.26.0

require github.com/wendflow/wend v0.0.0

// The nested module builds against the wend tree it sits in.
replace github.com/wendflow/wend => ../
