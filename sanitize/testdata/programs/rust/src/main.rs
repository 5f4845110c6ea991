// Reads one past the end of a vector through a raw pointer.
fn suffix_object(v: &Vec<i32>) -> i32 {
    let p = v.as_ptr();
    unsafe { *p.add(v.len()) }
}
fn main() {
    let v = vec![1, 2, 3];
    std::process::exit(if suffix_object(&v) == 12345 { 1 } else { 0 });
}
