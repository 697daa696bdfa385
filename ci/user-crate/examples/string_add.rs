//! `String + &String` and `String += &String`: a dependency that implements
//! `Add<Something> for String` (or `AddAssign`) makes these an E0277 in every crate of its build
//! (decancer's `Add<Translation> for String` and `AddAssign<Translation> for String` did).

fn main() {
    // a crate that uses toolnexus (a dependency nothing names is not loaded, nor its impls)
    assert_eq!(toolnexus_user_crate::toolkit().specs().len(), 1);
    let name = String::from("Oslo");
    let greeting = String::from("hello ") + &name;
    assert_eq!(greeting, "hello Oslo");
    let twice = greeting.clone() + &greeting;
    assert_eq!(twice.len(), 20);
    let mut grown = String::new();
    grown += &name;
    grown += &greeting;
    assert_eq!(grown, "Oslohello Oslo");
}
