package com.acme.app;

import java.util.List;
import com.acme.model.User;
import com.acme.model.*;
import static com.acme.util.Strings.shout;
import com.acme.model.User.Inner;

public class App {}
