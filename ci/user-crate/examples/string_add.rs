//! `String + &String`: a dependency that implements `Add<Something> for String` makes this an
//! E0277 in every crate of its build (decancer's `Add<Translation> for String` did).

fn main() {
    let name = String::from("Oslo");
    let greeting = String::from("hello ") + &name;
    assert_eq!(greeting, "hello Oslo");
    let twice = greeting.clone() + &greeting;
    assert_eq!(twice.len(), 20);
}
